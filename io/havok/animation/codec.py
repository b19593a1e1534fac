"""TEMPORARY stub until the codec lands."""
