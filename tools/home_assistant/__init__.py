"""hearth and the household's Home Assistant: its exposed entities, switched, set and read by voice."""
