"""Clients: trio connection, bot SDK and strategies, the terminal UI, offline tools."""
