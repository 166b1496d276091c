"""The assistant's mind: turns, the LLM, reply streaming and the timeline."""
