"""The project's tools beside the library: nothing in kacs_cli imports them."""
