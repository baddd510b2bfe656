"""Fixtures: a real ``undust serve`` on loopback ports, with its data directory in a temp dir.

The binary is ``$UNDUST_BIN``, else ``target/debug/undust`` of the repository (``cargo build``
or ``cargo test`` makes it). Under ``CI=true`` a missing binary fails the tests; elsewhere they
skip with a notice.
"""

from __future__ import annotations

import os
import pathlib
import socket
import subprocess
import time
from dataclasses import dataclass

import pytest

from undust_client import Retry, Undust

REPO = pathlib.Path(__file__).resolve().parents[3]


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def undust_binary() -> pathlib.Path:
    path = pathlib.Path(os.environ.get("UNDUST_BIN", REPO / "target" / "debug" / "undust"))
    if not path.exists():
        message = f"{path} not found: run `cargo build` first or set UNDUST_BIN"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


@dataclass
class Sidecar:
    address: str
    admin_address: str
    metrics_address: str
    data_dir: pathlib.Path
    process: subprocess.Popen


def start_sidecar(data_dir: pathlib.Path, *extra: str) -> Sidecar:
    address = f"127.0.0.1:{free_port()}"
    admin_address = f"127.0.0.1:{free_port()}"
    metrics_address = f"127.0.0.1:{free_port()}"
    log = open(data_dir.parent / f"{data_dir.name}.log", "wb")
    process = subprocess.Popen(
        [
            str(undust_binary()),
            "serve",
            "--listen", address,
            "--admin-listen", admin_address,
            "--metrics-addr", metrics_address,
            "--data-dir", str(data_dir),
            *extra,
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    sidecar = Sidecar(address, admin_address, metrics_address, data_dir, process)
    # Ready when a dry-run call answers: retries ride out UNAVAILABLE while it starts (bounded).
    with Undust(address, timeout=2, retry=Retry(attempts=60, initial=0.05, maximum=0.5)) as client:
        try:
            client.canonicalize(["http://ready.invalid/"], dry_run=True)
        except Exception:
            stop_sidecar(sidecar)
            raise
    return sidecar


def stop_sidecar(sidecar: Sidecar) -> None:
    sidecar.process.terminate()
    try:
        sidecar.process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        sidecar.process.kill()
        sidecar.process.wait(timeout=10)


@pytest.fixture
def sidecar(tmp_path):
    running = start_sidecar(
        tmp_path / "data",
        "--relearn-min-new-samples", "1000000",
        "--relearn-interval-secs", "86400",
    )
    yield running
    stop_sidecar(running)
