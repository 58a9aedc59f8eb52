"""client/tui."""
