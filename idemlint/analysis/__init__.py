"""Facts about one file, computed once and shared by every rule."""
