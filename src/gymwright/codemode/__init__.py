"""Code mode: a model's own PettingZoo environment class, vetted and run only in a sandbox.

`vet` checks the module with `ast`; `sandbox` starts a worker process (`worker`, with the
defences of `guard`) and talks to it in JSON frames (`wire`, `spaces`); `proxy` is a
ParallelEnv in gymwright's process whose every call goes over the pipe; `checks` verifies a
module the way spec mode verifies a spec; `vector` steps many sandboxed copies for training.
Nothing of the model's code is ever imported into gymwright's own process.
"""
