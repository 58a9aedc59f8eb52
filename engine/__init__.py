"""Pure rules for the card games: states, legal intents, projections. No I/O."""
