"""Operations whose second run leaves what the first one left, whatever ran in between.

Code that a racing duplicate runs twice does harm only where running it twice differs from
running it once. These names say "no difference" by what they do, in any library."""

from __future__ import annotations

import re

# create-if-absent and set-to-these-values: `Incident.objects.get_or_create(...)`,
# `Profile.objects.update_or_create(...)` (and their async forms)
CREATE_IF_ABSENT_METHODS = frozenset({"get_or_create", "update_or_create", "aget_or_create", "aupdate_or_create"})
# removals: a file, a row or a resource removed twice stays removed (`os.remove`,
# `shutil.rmtree`, `storage.delete(name)`, `qs.delete()`, `helpers.rm_file(path)`)
REMOVAL = re.compile(r"^(a?delete|remove|unlink|rmtree|rmdir|rm)(_\w+)?$")
