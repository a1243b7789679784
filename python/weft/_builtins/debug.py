"""Printing, assertions and inline assembly."""
