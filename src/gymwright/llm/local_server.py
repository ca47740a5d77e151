"""The child process that serves a local GGUF model: `python -m gymwright.llm.local_server`.

It starts xllamacpp's llama.cpp server on 127.0.0.1:PORT, prints `READY http://127.0.0.1:PORT`
on stdout, then blocks reading stdin. When stdin closes (the parent closed the pipe, or the
parent died and the kernel closed it) the server stops and the process exits, so a local model
never outlives the gymwright process that started it.
"""

from __future__ import annotations

import argparse
import sys


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m gymwright.llm.local_server")
    p.add_argument("--model", required=True, help="the .gguf file")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--ctx", type=int, default=4096)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse(argv)
    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = args.model
    params.n_ctx = args.ctx
    params.n_parallel = 1
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.sampling.seed = args.seed
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    server = xlc.Server(params)
    print(f"READY {server.listening_address}", flush=True)
    try:
        sys.stdin.read()  # returns at EOF: the parent is gone or asked us to stop
    except KeyboardInterrupt:
        pass
    del server
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
