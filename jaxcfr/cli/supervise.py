"""``jaxcfr train`` over several processes: each process runs its training in a child it watches.

When one process of a ``jax.distributed`` run dies, JAX's distributed service ends the
others by aborting them (``SIGABRT``, after several lines of its own C++ log and a stack
trace): nothing in the process can catch that and print one line. So
:mod:`jaxcfr.cli.launch` runs ``jaxcfr train ... --coordinator ...`` as a *supervisor*
(standard library only, nothing heavy imported) that starts the same command as its
child, passes the child's output through, and when the child ends by a signal says in
one line what happened and how to continue:

    jaxcfr: error: process 0 of 2 was ended by JAX's distributed service (SIGABRT): another
    process of the run died, was stopped or stopped answering; resume every process with
    --resume runs/leduc (last checkpoint: iteration 300) (JAX's log:
    /tmp/jaxcfr-process-0-4711.log)

* **Output.** The child's lines pass through as they come, except the C++ logs of JAX, XLA
  and gloo, which go to a log file (``$TMPDIR/jaxcfr-process-K-*.log``, named in the
  supervisor's line): the child's C-level stdout, where gloo writes ``[Gloo] Rank 0 is
  connected ...`` (:func:`divert_native_stdout`), and on stderr absl's lines such as
  ``E1202 23:59:01.123 ...``, stack dumps, and what JAX prints while it shuts down after
  the child's own error line. So stdout holds only jaxcfr's output (``--json`` is one
  line). ``--traceback`` or ``JAXCFR_TRACEBACK=1`` passes everything through.
* **Signals.** SIGINT and SIGTERM are forwarded to the child, which runs in its own process
  group so that a Ctrl-C at the terminal reaches it once (it checkpoints and ends with
  130 / 143, as a run in one process does). On Linux the child is SIGKILLed if the
  supervisor dies (``PR_SET_PDEATHSIG``), so killing a process's supervisor kills that
  process, as killing a plain process would.
* **Status.** The child's own status, or 2 when a signal ended it. The child tells the
  supervisor how far it got (:func:`tell_supervisor`, a file named in ``$JAXCFR_STAGE``):
  ``joined`` once every process joined, ``finished S`` once every process reached the end
  of the run and its output is printed. A child ended by a signal after ``finished S``
  (JAX's shutdown, after the run) ends with ``S``: the run finished. One ended before it
  joined is told apart: ``process 0 of 2 could not join the run at HOST:PORT: process 1 did
  not join within --initialization-timeout (60 s); ...`` (not "another process died").
* **Advice.** The line names what exists: ``--resume RUN_DIR`` when the run directory
  holds a checkpoint, else the same command again (a run directory without a checkpoint
  starts afresh).

The child sees ``JAXCFR_SUPERVISED=1`` and does not supervise again.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
from typing import IO, Sequence

from jaxcfr._util.native_stderr import is_banner

__all__ = ["SUPERVISED", "NATIVE_LOG", "STAGE", "needs_supervisor", "supervise",
           "is_native_log", "divert_native_stdout", "divert_native_stderr", "tell_supervisor",
           "advice"]

#: Set in the child's environment (a supervised process does not supervise again).
SUPERVISED = "JAXCFR_SUPERVISED"
#: The child's environment: the log file that its C-level stdout goes to.
NATIVE_LOG = "JAXCFR_NATIVE_LOG"
#: The child's environment: the file it tells its stage in (:func:`tell_supervisor`).
STAGE = "JAXCFR_STAGE"

#: Options that make ``jaxcfr train`` a run over several processes.
_CLUSTER_OPTIONS = ("--coordinator", "--num-processes", "--process-id")

#: C++ log lines of JAX / XLA / gloo: absl's ``[IWEF]MMDD hh:mm:ss.uuuuuu``, gloo's
#: ``[Gloo]``, and the stack dump of a failed check or a fatal signal.
_NATIVE = re.compile(r"^(?:[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+|\[Gloo\]|\*\*\* |\s+@ +0x|PC: @"
                     r"|Check failure stack trace|RPC: /|Additional GRPC error information"
                     r"|\[type\.googleapis\.com/|=== Source Location Trace)")
#: absl's line of any severity (its message may go on over the next lines).
_ABSL = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+")
#: absl's fatal line: what follows on stderr is the process dying (its dump: all to the log).
_FATAL = re.compile(r"^F\d{4} \d\d:\d\d:\d\d\.\d+")


def is_native_log(line: str) -> bool:
    """Whether ``line`` is a C++ log line of JAX, XLA or gloo (not jaxcfr's output), or a
    line of XLA's slow-compile banner (:mod:`jaxcfr._util.native_stderr`)."""
    return bool(_NATIVE.match(line)) or is_banner(line.encode("utf-8", "replace"))


def _value(args: Sequence[str], option: str) -> str | None:
    """The value of ``--option V`` / ``--option=V`` in ``args`` (the last one), or None."""
    found = None
    for k, a in enumerate(args):
        if a == option and k + 1 < len(args):
            found = args[k + 1]
        elif a.startswith(option + "="):
            found = a[len(option) + 1:]
    return found


def needs_supervisor(args: Sequence[str], env=os.environ) -> bool:
    """Whether the command line ``args`` (after the executable) is ``train`` over several
    processes, outside a supervisor."""
    if env.get(SUPERVISED) == "1":
        return False
    words = [a for a in args if a != "--traceback"]
    if not words or words[0] != "train" or "-h" in words or "--help" in words:
        return False
    return (any(a == o or a.startswith(o + "=") for a in words for o in _CLUSTER_OPTIONS)
            or bool(env.get("JAX_COORDINATOR_ADDRESS")))


def divert_native_stdout(env=os.environ) -> None:
    """In a supervised child: the C-level stdout (file descriptor 1) goes to the
    supervisor's log, while Python's ``sys.stdout`` keeps the pipe to the supervisor.

    gloo writes "[Gloo] Rank 0 is connected ..." to stdout from C++ threads, and two such
    writes can interleave inside one line, leaving fragments no filter recognises; diverted
    at the descriptor, none of it reaches jaxcfr's stdout (``--json`` stays one line)."""
    _divert_to_log(1, "stdout", env)


def divert_native_stderr(env=os.environ) -> None:
    """In a supervised child, once its output is printed: the C-level stderr (file
    descriptor 2: JAX's, XLA's and gloo's lines, JAX's shutdown) goes to the supervisor's
    log, while Python's ``sys.stderr`` (jaxcfr's own lines) keeps the terminal."""
    _divert_to_log(2, "stderr", env)


def _divert_to_log(fd: int, stream: str, env) -> None:
    """In a supervised child: descriptor ``fd`` to the supervisor's log, and
    ``sys.<stream>`` to a copy of what ``fd`` was (Python's own lines keep their way)."""
    path = env.get(NATIVE_LOG)
    if env.get(SUPERVISED) != "1" or not path:
        return
    getattr(sys, stream).flush()
    keep = os.dup(fd)
    log = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.dup2(log, fd)
    os.close(log)
    setattr(sys, stream, open(keep, "w", buffering=1, encoding="utf-8", errors="replace"))


def tell_supervisor(stage: str, env=os.environ) -> None:
    """In a supervised child: how far the run got (``joined``, ``finished STATUS``), read by
    the supervisor when the child ends; a no-op elsewhere."""
    path = env.get(STAGE)
    if env.get(SUPERVISED) != "1" or not path:
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(stage)
    except OSError:
        pass                     # (the supervisor then says less: nothing else changes)


def _stage(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return ""


_CHECKPOINT = re.compile(r"^ckpt-(\d{10})\.npz$")


def advice(run_dir: str | None, every: bool = True) -> str:
    """How to go on after a run over several processes stopped: ``--resume RUN_DIR`` when
    the run directory holds a checkpoint (its iteration named), else the same command again
    (nothing to resume: a run directory without a checkpoint starts afresh)."""
    found = []
    if run_dir:
        try:
            found = [int(m.group(1)) for m in map(_CHECKPOINT.match,
                                                 os.listdir(os.path.join(run_dir, "checkpoints")))
                     if m]
        except OSError:
            found = []
    who = "every process" if every else "the run"
    if found:
        return f"resume {who} with --resume {run_dir} (last checkpoint: iteration {max(found)})"
    if run_dir:
        return (f"no checkpoint was written in {run_dir}: start {who} again with the same "
                "command (it starts afresh)")
    return f"start {who} again with the same command (nothing to resume)"


def _die_with_parent() -> None:
    """In the child, before exec: SIGKILL when the supervisor dies (Linux; elsewhere a no-op)."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)           # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _pump(source: IO[bytes], sink: IO[bytes], log: IO[bytes], lock: threading.Lock,
          everything: bool, said: list[bool], prog: str, dying: list[bool],
          continued: list[bool]) -> None:
    for line in iter(source.readline, b""):
        text = line.decode("utf-8", "replace")
        native = is_native_log(text)
        with lock:
            on_stderr = sink is sys.stderr.buffer
            # after the child's own error line, what follows is JAX's shutdown, and after
            # absl's fatal line the process's dump (both in the log); an absl line that
            # ends in ':' goes on over the next lines up to a blank one (the coordination
            # service's "tasks are unhealthy (stopped sending heartbeats):", its task
            # list, "The tasks have crashed. ...")
            going_on = continued[0] and on_stderr
            if on_stderr:
                continued[0] = ((going_on and bool(text.strip()))
                                or (bool(_ABSL.match(text)) and text.rstrip().endswith(":")))
            native = native or going_on or ((said[0] or dying[0]) and on_stderr)
            said[0] = said[0] or text.startswith(f"{prog}: ")
            dying[0] = dying[0] or (on_stderr and bool(_FATAL.match(text)))
            if native:
                log.write(line)
                log.flush()
            if everything or not native:
                sink.write(line)
                sink.flush()


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def supervise(args: Sequence[str], prog: str = "jaxcfr",
              command: Sequence[str] | None = None) -> int:
    """Run ``python -m jaxcfr ARGS`` (or ``command``: a test's stand-in for it, which gets
    the same environment) as a watched child; return the exit status."""
    everything = "--traceback" in args or os.environ.get("JAXCFR_TRACEBACK") == "1"
    process = _value(args, "--process-id") or os.environ.get("JAX_PROCESS_ID", "?")
    processes = _value(args, "--num-processes") or os.environ.get("JAX_NUM_PROCESSES", "?")
    run_dir = _value(args, "--out") or _value(args, "--resume")
    # (appended to by this process and by the child's C-level stdout)
    tag = process if process.isdigit() else "x"       # (only digits go into a file name)
    log = tempfile.NamedTemporaryFile(mode="ab", prefix=f"jaxcfr-process-{tag}-",
                                      suffix=".log", delete=False)
    stage = log.name[:-len(".log")] + ".stage"
    env = dict(os.environ, **{SUPERVISED: "1", STAGE: stage})
    if not everything:
        env[NATIVE_LOG] = log.name
    command = [sys.executable, "-m", "jaxcfr", *args] if command is None else list(command)
    child = subprocess.Popen(command,
                             env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             # its own process group: a Ctrl-C at the terminal reaches it once,
                             # forwarded (twice would abort it without its checkpoint)
                             **({"process_group": 0} if os.name == "posix" else {}),
                             preexec_fn=_die_with_parent if sys.platform == "linux" else None)

    def forward(signum, frame):
        try:
            child.send_signal(signum)
        except ProcessLookupError:
            pass

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, forward)
    # said: the child printed its own error line; dying: absl's fatal line; continued: an
    # absl line whose message goes on over the next lines
    lock, said, dying, continued = threading.Lock(), [False], [False], [False]
    pumps = [threading.Thread(target=_pump, args=(src, dst, log, lock, everything, said, prog,
                                                  dying, continued), daemon=True)
             for src, dst in ((child.stdout, sys.stdout.buffer), (child.stderr, sys.stderr.buffer))]
    for t in pumps:
        t.start()
    status = child.wait()
    for t in pumps:
        t.join(timeout=10)
    told = _stage(stage)
    if os.path.exists(stage):
        os.unlink(stage)
    finished = told.startswith("finished ") and told[len("finished "):].lstrip("-").isdigit()
    if finished and status < 0:
        # the run is done, every process reached its end, the output is printed: what
        # ended the child was JAX's shutdown (its lines are in the log)
        log.write(f"{prog}: the run finished; then {_signal_name(-status)} ended this process "
                  "in JAX's shutdown\n".encode())
        log.close()
        return int(told[len("finished "):])
    log.close()
    if status >= 0 or said[0]:        # its own status, or its own line and then JAX's abort
        if os.path.getsize(log.name) == 0:
            os.unlink(log.name)
        return status if status >= 0 else 2
    name = _signal_name(-status)
    coordinator = _value(args, "--coordinator") or os.environ.get("JAX_COORDINATOR_ADDRESS", "?")
    if told != "joined" and -status == signal.SIGABRT:
        print(f"{prog}: error: process {process} of {processes} could not join the run at "
              f"{coordinator}: {_not_joined(process, processes, args, log.name)}; start every "
              f"process with the same --coordinator and --num-processes (JAX's log: "
              f"{log.name})", file=sys.stderr, flush=True)
        return 2
    if -status == signal.SIGABRT:
        why = (f"was ended by JAX's distributed service ({name}): another process of the run "
               "died, was stopped or stopped answering")
    else:
        why = f"was ended by {name}"
    print(f"{prog}: error: process {process} of {processes} {why}; {advice(run_dir)} "
          f"(JAX's log: {log.name})", file=sys.stderr, flush=True)
    return 2


def _not_joined(process: str, processes: str, args: Sequence[str], log_path: str) -> str:
    """Why a child ended before every process joined, from JAX's log."""
    seconds = _value(args, "--initialization-timeout") or "60"
    try:
        with open(log_path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        text = ""
    if "DEADLINE_EXCEEDED" not in text:
        fatal = next((line for line in text.splitlines() if _FATAL.match(line)), "")
        return fatal.split("] ", 1)[-1][:200] or "JAX's distributed service ended it"
    n = int(processes) if processes.isdigit() else 0
    if process == "0":
        who = ("process 1 did not join" if n == 2 else
               f"not every one of processes 1 to {n - 1} joined" if n > 2 else
               "the other processes did not all join")
    else:
        who = "not every process joined"
    return f"{who} within --initialization-timeout ({seconds} s)"
