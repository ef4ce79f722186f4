"""``jaxcfr.efg``: the public name of :mod:`jaxcfr.game.efg` (the Gambit ``.efg`` reader and
writer, which lives in the game layer). ``import jaxcfr.efg`` gives that module itself."""

import sys

from jaxcfr.game import efg as _efg

sys.modules[__name__] = _efg
