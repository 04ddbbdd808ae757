"""The language server's parts that are not the protocol loop (that is idemlint.server).

`settings` reads the editor's settings; `checker` checks a document as `idemlint check`
would check the file, through idemlint.api; `convert` turns findings into diagnostics and
hover text; `hover` answers a hover from a document's findings; `text` converts between
idemlint's positions (1-based lines, columns and offsets counted in characters) and the
protocol's (0-based lines, columns counted in the negotiated unit, UTF-16 by default), and
builds the `# noqa` edit of the suppress action.
"""
