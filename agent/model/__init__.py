"""The language model layer: llama.cpp behind the ChatModel protocol, and grammar-constrained sampling."""
