"""``jaxcfr --version``'s line, from package metadata (nothing heavy is imported)."""

from __future__ import annotations

import importlib.metadata
import platform

__all__ = ["version_line"]


def version_line() -> str:
    """``jaxcfr 0.1.0 (JAX 0.10.2, Python 3.11.9, Linux x86_64)``, from the installed
    packages' metadata (JAX is not imported)."""
    versions = []
    for package in ("jaxcfr", "jax"):
        try:
            versions.append(importlib.metadata.version(package))
        except importlib.metadata.PackageNotFoundError:
            versions.append("(not installed)")
    return (f"jaxcfr {versions[0]} (JAX {versions[1]}, Python {platform.python_version()}, "
            f"{platform.system()} {platform.machine()})")
