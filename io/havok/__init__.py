"""Havok collision objects and their packfiles."""
