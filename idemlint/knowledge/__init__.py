"""What idemlint knows about the world, each word defined once (issue 27).

The analyses match code against these definitions; nothing here imports the rest of
idemlint, so a new library or a new word is taught in one place. Started with the HTTP
vocabulary; the remaining tables move here step by step, each step keeping every
fixture's and corpus finding identical.
"""
