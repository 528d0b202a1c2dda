"""Stand-ins for the upload parser's child (tests/test_upload_parse.py): `python -m upload_children.hang` / `.die`."""
