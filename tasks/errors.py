"""The one exception type for bad user input: the CLI prints it as one line and exits 2."""


class UserError(Exception):
    """Bad input from the user (unknown name, invalid length, missing file, malformed suite...)."""
