"""The project's tools beside the library, nothing in kacs_cli imports them: the documents'
table filler (doctables) and the analysis scripts that measured what docs/ reports, each run as
`python tools/NAME.py` (its docstring gives the command line)."""
