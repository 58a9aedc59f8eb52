"""Cluster mode: several ``cardserver`` nodes on one Redis (docs/cluster.md).

Without ``--cluster`` nothing here runs: one process, SQLite. With it:

- :mod:`server.cluster.redis`: the Redis client (coredis, which runs under trio
  through anyio) and the start-up persistence check.
- :mod:`server.cluster.keys`: every Redis key and channel name, in one place.
- :mod:`server.cluster.nodes`: this node's liveness lease and the list of live nodes.
- the match journal, match ownership (leases with fencing epochs) and adoption
  of a dead node's matches; the relay that carries a client's requests to the
  match's owner and the owner's messages back; the cluster-wide lobby index,
  sessions and matchmaking queues: each in its own module, described in
  docs/cluster.md.
"""
