"""gymwright environments served to the LLM-RL ecosystem, as text games (`gymwright.textgame`).

`session.py` is one served episode: the agents a client plays, the others played by a fixed
policy (`opponents.py`: `random`, `scripted:NAME`). Over it: `openenv_env.py` (an openenv-core
`Environment` and its action, observation and state types), `openenv_server.py` (openenv's
FastAPI app under uvicorn; `gymwright serve`), `openenv_client.py` (an openenv `EnvClient`) and
`verifiers_env.py` (a verifiers `MultiTurnEnv`, `load_environment`). The optional packages
(the `openenv` and `verifiers` extras) are imported only by the modules that need them, so
import those modules directly; docs/interop.md has the recipes.
"""
