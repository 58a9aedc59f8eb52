"""client/bots."""
