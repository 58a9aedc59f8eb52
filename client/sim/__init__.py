"""client/sim."""
