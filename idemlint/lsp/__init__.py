"""Helpers of the language server (`idemlint server`) that do not need pygls.

`idemlint.lsp.text` converts between idemlint's positions (1-based lines, columns and
offsets counted in characters) and the protocol's (0-based lines, columns counted in the
negotiated unit, UTF-16 by default), and builds the `# noqa` edit of the suppress action.
"""
