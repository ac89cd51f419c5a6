"""Shared facts (v1): the facts run, its strategies, the reference shared-facts system and the
plug-in protocol any memory system implements to be measured (see docs/facts.md)."""
