"""The throwaway PostgreSQL cluster the team-server tests use (it lives in the package, for
the demo and the benchmarks too): src/memdream/team/cluster.py."""

from memdream.team.cluster import Cluster, available, find_bin  # noqa: F401
