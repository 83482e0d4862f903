# jq 1.6's builtins that jaq does not define, written as jq defines them, so that `--where`
# means what jq means with them too (src/ops/jq/mod.rs loads these after jaq's own).
# `fromstream` is left out: it needs `setpath` to create what is missing from null, which
# jaq's does not.
def IN(s): any(s == .; .);
def IN(src; s): any(src == s; .);
def INDEX(stream; idx_expr): reduce stream as $row ({}; .[$row | idx_expr | tostring] |= $row);
def INDEX(idx_expr): INDEX(.[]; idx_expr);
def JOIN($idx; idx_expr): [.[] | [., $idx[idx_expr]]];
def JOIN($idx; stream; idx_expr): stream | [., $idx[idx_expr]];
def JOIN($idx; stream; idx_expr; join_expr): stream | [., $idx[idx_expr]] | join_expr;
def leaf_paths: paths(scalars);
def recurse_down: recurse;
def tostream: path(def r: (.[]? | r), .; r) as $p | getpath($p) | reduce path(.[]?) as $q ([$p, .]; [$p + $q]);
def truncate_stream(stream): . as $n | null | stream | . as $input
  | if (.[0] | length) > $n then setpath([0]; .[0][$n:]) else empty end;
def @csv:
  if type != "array" then error("\(type) (\(tojson)) cannot be csv-formatted, only an array can be")
  else map(
    if type == "string" then "\"" + gsub("\""; "\"\"") + "\""
    elif type == "number" or type == "boolean" then tostring
    elif type == "null" then ""
    else error("\(type) (\(tojson)) is not valid in a csv row") end
  ) | join(",") end;
def @tsv:
  if type != "array" then error("\(type) (\(tojson)) cannot be tsv-formatted, only an array can be")
  else map(
    if type == "string" then gsub("\\\\"; "\\\\") | gsub("\t"; "\\t") | gsub("\n"; "\\n") | gsub("\r"; "\\r")
    elif type == "number" or type == "boolean" then tostring
    elif type == "null" then ""
    else error("\(type) (\(tojson)) is not valid in a tsv row") end
  ) | join("\t") end;
def format($f):
  if $f == "csv" then @csv elif $f == "tsv" then @tsv elif $f == "json" then tojson
  elif $f == "text" then tostring elif $f == "html" then @html elif $f == "uri" then @uri
  elif $f == "sh" then @sh elif $f == "base64" then @base64 elif $f == "base64d" then @base64d
  else error("\($f) is not a valid format") end;
