"""parplan from Python: plan, estimate and sweep with libparplan (ctypes).

    import parplan
    best = parplan.plan(model="llama3-8b", cluster="dgx-h100", gpus=64, global_batch=512, seq=8192)["plans"][0]
    fits = parplan.estimate(model="llama3-70b", cluster="dgx-h100", nodes=8, tp=8, pp=2, zero=1)["memory"]["fits"]
    for row in parplan.sweep({"grid": {"model": ["llama3-8b", "llama3-70b"], "cluster": ["dgx-h100"],
                                       "gpus": [64, 128, 256], "global_batch": [512]}}):
        ...

Requests are the scenario JSON of docs/sweep.md, given as keyword arguments;
results are the plain dicts of `parplan ... --format json` (docs/schema.md).
A sweep is a generator: rows stream in index order in constant memory, so a
10^6-scenario sweep can be consumed as it runs. Failures raise parplan.Error
with the CLI's exit code, the field at fault and the message.
The shared library is found as parplan._lib explains (PARPLAN_LIB,
pkg-config, the build tree, the system path); no compiler is needed.
"""
import ctypes
import json
import os
import queue
import threading

from ._lib import EMIT, ERR_BUF, ERR_LEN, PROGRESS, LibraryNotFound, SweepOpts, lib, library_path

__version__ = "0.1.0"
__all__ = ["Error", "LibraryNotFound", "plan", "estimate", "sweep", "sweep_size", "to_pandas", "version",
           "library_path"]


class Error(Exception):
    """A request parplan refused or could not answer.

    exit_code: the CLI's exit code (1 nothing fits, 2 bad input, 3 internal);
    field: the request key or spec path at fault ("tp", "grid.gpus"), None
    when the failure is not one field's; message: parplan's one-line reason.
    """

    def __init__(self, exit_code, field, message):
        super().__init__("%s (exit %d%s)" % (message, exit_code, ", field %s" % field if field else ""))
        self.exit_code = exit_code
        self.field = field
        self.message = message


def _field(path):
    """"$.grid.gpus" -> "grid.gpus"; "$" stays "$"; "" -> None."""
    if not path:
        return None
    return path[2:] if path.startswith("$.") else path


def version():
    """The library's version string."""
    return lib().pp_version().decode()


def _request(fn, args):
    status = ctypes.c_int(0)
    _no_nan(args)
    ptr = fn(json.dumps(args).encode(), ctypes.byref(status))
    if not ptr:
        raise MemoryError("libparplan returned no result (out of memory)")
    try:
        res = json.loads(ctypes.string_at(ptr).decode())
    finally:
        lib().pp_free(ptr)
    err = res.get("error")
    if err:
        raise Error(err["exit_code"], _field(err.get("field")), err["message"])
    return res


def plan(model, cluster, global_batch, **scenario):
    """Ranked plans: {"schema_version", "scenario", "plans": [...]} with the
    plan objects of `parplan plan --format json`. Keyword arguments are the
    scenario keys of docs/sweep.md (gpus, nodes, seq, top, tp=8, zero=[1, 2],
    precision="bf16", mode="lora", train_tokens=1e12, ...). Raises Error (exit
    code 1) when nothing fits, (2) for bad input."""
    scenario.update(model=model, cluster=cluster, global_batch=global_batch)
    return _request(lib().pp_plan_request, scenario)


def estimate(model, cluster, **strategy):
    """One strategy's plan object, as `parplan estimate --format json` gives
    it. Keys are the estimate flags with underscores (tp, pp, dp, zero,
    micro_batch, global_batch, seq, recompute, precision, offload, schedule,
    stage_layers, sp=True, mode, lora_rank, train_tokens, ...), with the
    CLI's defaults. A plan that does not fit is returned ("fits": false)."""
    strategy.update(model=model, cluster=cluster)
    return _request(lib().pp_estimate_request, strategy)["plan"]


def _no_nan(args):
    """A NaN or infinity names its key (JSON has neither: the library would
    see malformed text)."""
    for k, v in args.items():
        if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
            raise Error(2, k, "%s: %r: expected a finite number" % (k, v))


def _spec_text(spec):
    if isinstance(spec, (dict, list)):
        return json.dumps(spec).encode(), b"spec"
    if isinstance(spec, bytes):
        return spec, b"spec"
    if isinstance(spec, os.PathLike) or (isinstance(spec, str) and not spec.lstrip().startswith("{")):
        try:
            with open(spec, "rb") as f:
                return f.read(), os.fsencode(spec)
        except OSError as e:  # as the CLI: a spec that cannot be read is bad input, exit 2
            raise Error(2, None, "%s: %s" % (os.fsdecode(spec), e.strerror or e)) from e
    return spec.encode(), b"spec"


def _raise_status(st, err):
    l = lib()
    buf = ctypes.create_string_buffer(ERR_LEN)
    field = l.pp_error_field(err, buf, ERR_LEN).decode()
    raise Error(l.pp_status_exit_code(st), _field(field), err.raw[:ERR_LEN].split(b"\0")[0].decode(errors="replace"))


def sweep_size(spec):
    """Scenarios in a spec (a dict, JSON text, or a file path)."""
    text, where = _spec_text(spec)
    n = ctypes.c_int(0)
    err = ctypes.create_string_buffer(ERR_BUF)
    st = lib().pp_sweep_count(text, len(text), where, ctypes.byref(n), err)
    if st != 0:
        _raise_status(st, err)
    return n.value


class _Runner(threading.Thread):
    """A thread that runs sweeps one after another. Runners are reused, so
    the per-thread state of the libraries below (the OpenMP pool, GLPK's
    environment) is made once per runner, not once per sweep."""
    idle = []
    lock = threading.Lock()

    def __init__(self):
        super().__init__(daemon=True, name="parplan-sweep")
        self.jobs = queue.Queue()
        self.start()

    @classmethod
    def get(cls):
        with cls.lock:
            return cls.idle.pop() if cls.idle else cls()

    def run(self):
        while True:
            job = self.jobs.get()
            try:
                job()
            finally:
                with _Runner.lock:
                    _Runner.idle.append(self)


_END = object()


def _framework_mask(names):
    """["megatron", "fsdp"] -> the pp_framework bit mask, by the library's own names."""
    if not names:
        return 0
    if isinstance(names, str):
        names = [names]
    known = {}
    for f in range(64):
        name = lib().pp_framework_name(f).decode()
        if name == "?":
            break
        known[name] = f
    mask = 0
    for n in names:
        if n not in known:
            raise Error(2, "framework", "framework: expected one of %s, got %r" % ("|".join(known), n))
        mask |= 1 << known[n]
    return mask


def sweep(spec, jobs=0, shard=None, top=None, framework=None, skip=(), window=0):
    """Runs a sweep spec (a dict, JSON text, or a file path; docs/sweep.md)
    and yields one dict per scenario in index order: {"index", "scenario",
    "plans": [...]} or {"index", "scenario", "error": {...}} when that
    scenario failed (the sweep goes on). jobs: worker threads (0 = all
    cores); shard=(k, n): every n-th scenario from the k-th; top: plans per
    scenario that gives none; framework: a name or names ("megatron",
    ["fsdp", "deepspeed"]) for scenarios that give none; skip: indices to
    leave out (a resume).
    At most `window` + a few results are held at once, whatever the size.
    Raises Error when the spec itself is bad."""
    text, where = _spec_text(spec)
    o = SweepOpts()
    o.jobs = jobs
    o.shard_k, o.shard_n = shard if shard else (0, 0)
    o.top = top or 0
    o.frameworks = _framework_mask(framework)
    o.window = window
    skip = sorted(set(skip))
    skip_arr = (ctypes.c_int * max(1, len(skip)))(*skip)
    o.skip, o.nskip = skip_arr, len(skip)
    lines = queue.Queue(maxsize=64)
    cancel = threading.Event()

    def emit(index, line, st, user):
        while not cancel.is_set():
            try:
                lines.put(line, timeout=0.1)  # blocks while the consumer is behind: back-pressure
                return 0
            except queue.Full:
                continue
        return 1  # the generator was closed: stop the sweep

    o.emit = EMIT(emit)
    o.progress = PROGRESS(0)
    err = ctypes.create_string_buffer(ERR_BUF)
    failed = ctypes.c_int(0)
    result = {}

    def job():
        try:
            result["st"] = lib().pp_sweep_run(text, len(text), where, ctypes.byref(o), ctypes.byref(failed), err)
        except BaseException as e:  # noqa: BLE001 - handed to the consumer
            result["exc"] = e
        finally:
            while True:  # the end marker must get through even if the consumer is slow
                try:
                    lines.put(_END, timeout=0.1)
                    break
                except queue.Full:
                    if cancel.is_set():
                        break

    lib()  # load (or raise LibraryNotFound) on the caller's thread
    _Runner.get().jobs.put(job)
    try:
        while True:
            line = lines.get()
            if line is _END:
                break
            yield json.loads(line)
    finally:
        cancel.set()  # closed early: the runner's next emit stops the sweep
    # here the sweep has ended (a closed generator never gets here)
    if "exc" in result:
        raise result["exc"]
    if result.get("st", 0) != 0:
        _raise_status(result["st"], err)


def to_pandas(rows):
    """A pandas DataFrame of results (sweep rows or plans), nested keys
    flattened ("plans" rows keep the best plan). Needs pandas installed."""
    try:
        import pandas
    except ImportError as e:
        raise ImportError("to_pandas needs pandas (Debian: apt-get install python3-pandas)") from e
    flat = []
    for r in rows:
        if "plans" in r:
            r = dict(r, plan=r["plans"][0] if r["plans"] else None)
            del r["plans"]
        flat.append(r)
    return pandas.json_normalize(flat)
