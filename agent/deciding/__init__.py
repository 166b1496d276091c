"""Deciding what to do: the tool decision, the user's own words read, asked back, corrected, undone."""
