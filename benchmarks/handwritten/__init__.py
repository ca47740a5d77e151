"""Hand-written PettingZoo ParallelEnvs of three library specs (the throughput baseline)."""
