"""The OpenEnv server of a gymwright spec: openenv-core's own FastAPI app (`create_app`) over
`GymwrightEnvironment`, run by uvicorn on 127.0.0.1 unless told otherwise.

```python
app = make_app("stag_hunt", role="hunter_0", opponent="scripted:always_stag")
serve(app, port=8000)                      # blocks; `gymwright serve stag_hunt --role hunter_0 ...`
with ServerThread(app) as server:          # in the background, on a free port of 127.0.0.1
    client = GymwrightEnvClient(base_url=server.base_url).sync()
```

Each WebSocket connection (what openenv's `EnvClient` opens) is one session with its own game;
`max_sessions` caps them. The stateless HTTP `/reset` and `/step` of openenv build a fresh
environment per request, so episodes are played over the WebSocket (the client does that).
"""

from __future__ import annotations

import socket
import threading
import time
from functools import partial
from typing import Any

from gymwright.errors import GymwrightError
from gymwright.serve.extras import missing_extra
from gymwright.serve.openenv_env import GameAction, GameObservation, GymwrightEnvironment
from gymwright.serve.session import Session

try:
    import uvicorn
    from openenv.core.env_server.http_server import create_app
    from starlette.websockets import WebSocketDisconnect
except ImportError as e:  # pragma: no cover - the `openenv` extra is missing
    raise missing_extra("openenv-core", "openenv") from e

LOOPBACK = "127.0.0.1"


def make_app(spec: Any, params: dict[str, Any] | None = None, *, role: str | None = None,
             opponent: str = "random", invalid: str = "random", max_sessions: int = 8) -> Any:
    """The FastAPI app serving `spec` (checked now: a bad spec, role or opponent fails here)."""
    probe = Session(spec, params, role=role, opponent=opponent, invalid=invalid)
    factory = partial(GymwrightEnvironment, spec, params, role=role, opponent=opponent, invalid=invalid)
    app = create_app(factory, GameAction, GameObservation, env_name=probe.spec_name,
                     max_concurrent_envs=max_sessions)
    app.add_middleware(QuietWebSocketClose)
    return app


class QuietWebSocketClose:
    """ASGI middleware: a WebSocket session the client closed first ends quietly. (openenv's
    endpoint closes the socket again after the client's `close` message; starlette raises
    `WebSocketDisconnect` for that, which uvicorn would log as an error of the application.)"""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await self.app(scope, receive, send)
        except WebSocketDisconnect:
            if scope.get("type") != "websocket":
                raise


def serve(app: Any, host: str = LOOPBACK, port: int = 8000, log_level: str = "info") -> None:
    """Run `app` until interrupted."""
    uvicorn.run(app, host=host, port=port, log_level=log_level)


class ServerThread:
    """`app` served by uvicorn in a background thread (port 0: a free port), as a context manager."""

    def __init__(self, app: Any, host: str = LOOPBACK, port: int = 0, start_timeout: float = 20.0) -> None:
        self.host, self.start_timeout = host, start_timeout
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((host, port))
        self.port = int(self._sock.getsockname()[1])
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> ServerThread:
        self._thread.start()
        deadline = time.monotonic() + self.start_timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self._sock.close()
                raise GymwrightError(f"the OpenEnv server did not start on {self.base_url}", path="serve",
                                     hint="see the log above for uvicorn's error")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()
