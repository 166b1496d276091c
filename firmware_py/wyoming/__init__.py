"""hearth's speech parts and agent, offered to Home Assistant over the Wyoming protocol."""
