"""The authoritative trio server: listener, connections, lobby, match tasks, store."""
