"""`gymwright serve SPEC`: the spec as a text game on an OpenEnv server (openenv-core), for
language-model agents and LLM-RL trainers (registered in `gymwright.cli`; docs/interop.md)."""

from __future__ import annotations

from typing import Annotated

import typer

from gymwright.cli.common import err


def serve_command(
    spec: Annotated[str, typer.Argument(metavar="SPEC", help="A spec file or a library spec name.", show_default=False)],
    param: Annotated[list[str] | None, typer.Option("--param", "-p", metavar="NAME=VALUE", help="Set a param of the spec.")] = None,
    role: Annotated[str | None, typer.Option("--role", metavar="AGENT", help="The agent the client plays; the "
                                             "opponent plays the others. Default: the client plays every agent.")] = None,
    opponent: Annotated[str, typer.Option("--opponent", metavar="random|scripted:NAME", help="Who plays the agents "
                                          "the client does not (with --role): random legal actions or a scripted baseline.")] = "random",
    invalid: Annotated[str, typer.Option("--invalid", metavar="random|first", help="What a reply that names no legal "
                                         "action plays: a random legal action or the first.")] = "random",
    host: Annotated[str, typer.Option("--host", help="Address to listen on (loopback by default; 0.0.0.0 opens it "
                                      "to the network).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to listen on.")] = 8000,
    max_sessions: Annotated[int, typer.Option("--max-sessions", min=1, help="Concurrent client sessions (one game each).")] = 8,
) -> None:
    """Serve SPEC as a text game on an OpenEnv server: each WebSocket client (openenv's EnvClient;
    gymwright.serve.openenv_client.GymwrightEnvClient) plays episodes by sending reply text."""
    from gymwright.cli.common import domain_errors, parse_params

    with domain_errors(spec):
        from gymwright.serve.openenv_server import make_app, serve

        app = make_app(spec, parse_params(param), role=role, opponent=opponent, invalid=invalid,
                       max_sessions=max_sessions)
    who = f"the client plays {role}, {opponent} the others" if role else "the client plays every agent"
    err.print(f"serving {spec} on http://{host}:{port} ({who}); WebSocket sessions at ws://{host}:{port}/ws")
    serve(app, host=host, port=port)
