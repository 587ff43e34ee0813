"""Tables for the tests, built and packed by the real `kingmaker` binary (target/release/kingmaker,
or $KINGMAKER_BIN): cc3p level 1 whole, in part and in parts, and cc2p on the 4x4 board."""

import contextlib
import functools
import http.server
import os
import pathlib
import subprocess
import threading

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The token the workers and the coordinator of the kept-layer build share.
TOKEN = "python-tests-token"


def kingmaker_bin():
    return os.environ.get("KINGMAKER_BIN", str(ROOT / "target" / "release" / "kingmaker"))


def worker_bin():
    """`kingmaker-worker`, beside `kingmaker`."""
    return str(pathlib.Path(kingmaker_bin()).with_name("kingmaker-worker"))


def run_kingmaker(*args, env=None):
    out = subprocess.run(
        [kingmaker_bin(), *map(str, args)], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.fixture(scope="session")
def level1(tmp_path_factory):
    """(run directory, release directory) of cc3p level 1."""
    base = tmp_path_factory.mktemp("level1")
    run, rel = base / "run", base / "rel"
    run_kingmaker("build", "cc3p", "--level", "1", "--out", run)
    run_kingmaker("pack", run, "--out", rel)
    return run, rel


@pytest.fixture(scope="session")
def cc2p_small(tmp_path_factory):
    """A run of cc2p on the 4x4 board with 2 pieces: a two-player game whose rules decode any
    number as a position."""
    run = tmp_path_factory.mktemp("cc2p") / "run"
    run_kingmaker("build", "cc2p", "--board", "4x4", "--pieces", "2", "--out", run)
    return run


@contextlib.contextmanager
def serving(directory):
    """A static web server on a free local port for `directory`: its base URL."""
    handler = functools.partial(QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def solo_only(level1, tmp_path_factory):
    """cc3p level 1's release fetched over HTTP with `--layers solo`, as a user would."""
    _, rel = level1
    out = tmp_path_factory.mktemp("fetched") / "solo-only"
    with serving(rel) as url:
        run_kingmaker("fetch", url, out, "--layers", "solo")
    return out


@contextlib.contextmanager
def workers(n, base):
    """`n` kingmaker-worker processes on free local ports, data under `base`: their addresses."""
    env = {**os.environ, "KINGMAKER_TOKEN": TOKEN}
    procs = []
    try:
        addrs = []
        for k in range(n):
            data = base / f"worker{k}"
            proc = subprocess.Popen(
                [worker_bin(), "--listen", "127.0.0.1:0", "--data-dir", data, "--threads", "1"],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                env=env,
            )
            procs.append(proc)
            # It says where it listens before it serves.
            for line in proc.stdout:
                if line.startswith("kingmaker-worker listening on "):
                    addrs.append(line.split()[-1])
                    break
            else:
                pytest.fail(f"kingmaker-worker {k} exited without listening")
            # The rest of its output is read, so that a full pipe never stops it.
            threading.Thread(target=proc.stdout.read, daemon=True).start()
        yield addrs
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def in_parts(tmp_path_factory):
    """A run of cc3p level 1 whose layers were kept on two workers and copied here in parts
    (`collect --in-parts`): each layer is read across several part files."""
    base = tmp_path_factory.mktemp("in-parts")
    run = base / "run"
    with workers(2, base) as addrs:
        run_kingmaker(
            "build", "cc3p", "--level", "1", "--out", run,
            "--workers", ",".join(addrs), "--token", TOKEN, "--keep-layers-on-workers",
            "--shard-size", "128", "--worker-timeout", "30",
        )
        run_kingmaker("collect", run, "--token", TOKEN, "--in-parts")
    assert list((run / "layers").glob("solo.part-*")), "collect --in-parts copied no parts"
    return run
