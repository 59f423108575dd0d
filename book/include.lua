--[[
include.lua - literate includes for "Containing Memory".

A fenced code block with one of these attributes is replaced by text read
from the repository at build time (paths are relative to the repository
root; see chapters/TEMPLATE.md for the full description and examples):

  ```{include="code/touch.c"}                      whole file
  ```{include="labs/ch00/lab.sh" marker="cgroup"}   region between
                                                    @cm-begin cgroup / @cm-end cgroup
  ```{patch="patches/0001-res-counter.patch"}       whole patch
  ```{patch="0001"}                                 same: patches/0001-*.patch
  ```{patch="0001" file="kernel/res_counter.c"}     hunks touching one file
  ```{patch="0001" function="res_counter_charge"}   hunks of one function
  ```{patch="0001" file="..." function="..."}       both: that function in that file

The body of such a block must be empty. Classes given on the block (.c, .diff,
.bash) are kept; without one the language is guessed from the file name.
A block with class .nolabel gets no "source" line above it.

Any reference that does not resolve is an error: the filter reports every
broken reference with the chapter file, its line and the reference, and the
build fails.

Function rule (patch + function=NAME), applied to every hunk:
  1. a hunk whose @@ header names NAME as a function - git prints the
     enclosing function after the second @@, e.g.
     "@@ -10,6 +10,8 @@ int res_counter_charge(struct res_counter *c," -
     is taken whole;
  2. otherwise, a hunk whose added lines define NAME - a '+' line that does
     not start with whitespace or '#', contains "NAME(", and reaches a '{'
     before any ';' - contributes only that definition: from the comment
     and declaration lines directly above it (contiguous non-blank lines)
     down to the '}' that closes its body, with a recomputed @@ header.
     This is how a function in a brand-new file (one big hunk) is shown.
Hunks are grouped per file and keep their --- / +++ lines.

Chapter names: the book build wraps each chapter in a Div with attribute
cm-source="chapters/NN-slug.md" (see book/book.mk); the filter unwraps it.
When pandoc runs on a single file, that file is the chapter.

Repository root: metadata cm-root (pandoc -M cm-root=DIR), else the
environment variable CM_ROOT, else the current directory.
]]

local root = "."
local errors = {}
local source_cache = {}

------------------------------------------------------------------------
-- small helpers

local function read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function is_dir(path)
  local f = io.open(path, "rb")
  if not f then return false end
  local ok, _, code = f:read(1)
  f:close()
  return ok == nil and code == 21
end

local function split_lines(s)
  local t = {}
  if s == "" then return t end
  if s:sub(-1) ~= "\n" then s = s .. "\n" end
  for line in s:gmatch("(.-)\n") do t[#t + 1] = line end
  return t
end

local function escape_pattern(s)
  return (s:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", "%%%0"))
end

local function list_dir(dir)
  local names = {}
  local p = io.popen('ls -1 "' .. dir .. '" 2>/dev/null')
  if p then
    for n in p:lines() do names[#names + 1] = n end
    p:close()
  end
  return names
end

-- The line of the chapter on which a reference appears: the k-th code fence
-- line holding the reference's main value (and its second value, if any),
-- where k counts earlier references with the same values.
local seen_refs = {}
local function find_line(chapter, a, b)
  if not chapter then return nil end
  local text = source_cache[chapter]
  if text == nil then
    text = read_file(chapter) or false
    source_cache[chapter] = text
  end
  if not text then return nil end
  local key = chapter .. "\0" .. a .. "\0" .. (b or "")
  seen_refs[key] = (seen_refs[key] or 0) + 1
  local want = seen_refs[key]
  local n, hits = 0, 0
  for line in (text .. "\n"):gmatch("(.-)\n") do
    n = n + 1
    if line:match("^%s*[`~][`~][`~]") and line:find('"' .. a .. '"', 1, true)
        and (not b or line:find('"' .. b .. '"', 1, true)) then
      hits = hits + 1
      if hits == want then return n end
    end
  end
  return nil
end

local function describe(attr)
  local parts = {}
  for _, k in ipairs({ "include", "marker", "patch", "file", "function", "symbol" }) do
    if attr[k] then parts[#parts + 1] = string.format('%s="%s"', k, attr[k]) end
  end
  return "{" .. table.concat(parts, " ") .. "}"
end

-- Paths must stay inside the repository.
local function check_path(p)
  if p == "" then return "empty path" end
  if p:sub(1, 1) == "/" then return "absolute path (paths are relative to the repository root)" end
  for comp in p:gmatch("[^/]+") do
    if comp == ".." then return "path leaves the repository ('..')" end
  end
  return nil
end

------------------------------------------------------------------------
-- markers: "@cm-begin NAME" / "@cm-end NAME" anywhere on a line

local function marker_of(line)
  local kind, name = line:match("@cm%-(begin)%s+([%w_%.%-]+)")
  if not kind then kind, name = line:match("@cm%-(end)%s+([%w_%.%-]+)") end
  return kind, name
end

local function strip_markers(lines)
  local out = {}
  for _, l in ipairs(lines) do
    if not marker_of(l) then out[#out + 1] = l end
  end
  return out
end

local function dedent(lines)
  local common
  for _, l in ipairs(lines) do
    if l:match("%S") then
      local ws = l:match("^[ \t]*")
      if common == nil then
        common = ws
      else
        local i = 0
        while i < #common and i < #ws and common:sub(i + 1, i + 1) == ws:sub(i + 1, i + 1) do
          i = i + 1
        end
        common = common:sub(1, i)
      end
    end
  end
  if not common or common == "" then return lines end
  local out = {}
  for _, l in ipairs(lines) do out[#out + 1] = l:sub(#common + 1) end
  return out
end

local function trim_blank_edges(lines)
  local first, last = 1, #lines
  while first <= last and not lines[first]:match("%S") do first = first + 1 end
  while last >= first and not lines[last]:match("%S") do last = last - 1 end
  local out = {}
  for i = first, last do out[#out + 1] = lines[i] end
  return out
end

-- Returns the lines of region NAME, or nil and a reason.
local function extract_marker(lines, name, path)
  local begin_at, end_at
  for i, l in ipairs(lines) do
    local kind, n = marker_of(l)
    if n == name then
      if kind == "begin" then
        if begin_at then
          return nil, string.format("@cm-begin %s appears twice in %s (lines %d and %d)",
            name, path, begin_at, i)
        end
        begin_at = i
      elseif kind == "end" then
        if not begin_at then
          return nil, string.format("@cm-end %s on line %d of %s comes before any @cm-begin %s",
            name, i, path, name)
        end
        if end_at then
          return nil, string.format("@cm-end %s appears twice in %s", name, path)
        end
        end_at = i
      end
    end
  end
  if not begin_at then
    return nil, string.format("no marker '@cm-begin %s' in %s", name, path)
  end
  if not end_at then
    return nil, string.format("'@cm-begin %s' on line %d of %s has no matching '@cm-end %s'",
      name, begin_at, path, name)
  end
  local region = {}
  for i = begin_at + 1, end_at - 1 do region[#region + 1] = lines[i] end
  region = trim_blank_edges(dedent(strip_markers(region)))
  if #region == 0 then
    return nil, string.format("region '%s' in %s is empty", name, path)
  end
  return region
end

------------------------------------------------------------------------
-- patches

-- Parse a git format-patch file (or a plain unified diff) into
-- { files = { {path=, header={...}, hunks={ {header=, lines={...}, old=, new=} } } } }
local function parse_patch(text)
  local lines = split_lines(text)
  local files = {}
  local cur, hunk
  local old_left, new_left = 0, 0
  local i = 1
  local function strip_prefix(p)
    p = p:gsub("\t.*$", "")
    if p == "/dev/null" then return nil end
    return (p:gsub("^[^/]+/", "", 1))
  end
  while i <= #lines do
    local l = lines[i]
    if hunk and (old_left > 0 or new_left > 0) then
      local c = l:sub(1, 1)
      if c == " " or l == "" then
        old_left, new_left = old_left - 1, new_left - 1
      elseif c == "-" then
        old_left = old_left - 1
      elseif c == "+" then
        new_left = new_left - 1
      end
      -- "\ No newline at end of file" counts for nothing
      hunk.lines[#hunk.lines + 1] = l
    elseif l:match("^\\ ") and hunk then
      hunk.lines[#hunk.lines + 1] = l
    elseif l:match("^diff %-%-git ") then
      cur = { path = l:match(" b/(.*)$") or l, header = {}, hunks = {} }
      files[#files + 1] = cur
      hunk = nil
    elseif l:match("^%-%-%- ") and (lines[i + 1] or ""):match("^%+%+%+ ") then
      local oldp = strip_prefix(l:sub(5))
      local newp = strip_prefix(lines[i + 1]:sub(5))
      if not cur or #cur.hunks > 0 or cur.has_minus then
        cur = { header = {}, hunks = {} }
        files[#files + 1] = cur
      end
      cur.path = newp or oldp
      cur.new_file = (oldp == nil)
      cur.has_minus = true
      cur.header[#cur.header + 1] = l
      cur.header[#cur.header + 1] = lines[i + 1]
      hunk = nil
      i = i + 1
    elseif l:match("^@@ ") and cur then
      local os_, oc, ns, nc, ctx = l:match("^@@ %-(%d+),?(%d*) %+(%d+),?(%d*) @@ ?(.*)$")
      if not os_ then
        hunk = nil
      else
        hunk = {
          header = l, ctx = ctx or "", lines = {},
          old = tonumber(os_), new = tonumber(ns),
        }
        old_left = (oc == "") and 1 or tonumber(oc)
        new_left = (nc == "") and 1 or tonumber(nc)
        cur.hunks[#cur.hunks + 1] = hunk
      end
    else
      hunk = nil
    end
    i = i + 1
  end
  return files
end

local function names_function(s, fn)
  return s:find("%f[%w_]" .. escape_pattern(fn) .. "%s*%(") ~= nil
end

local function strip_c_noise(s)
  s = s:gsub('"[^"]*"', '""'):gsub("'[^']*'", "''")
  s = s:gsub("/%*.-%*/", ""):gsub("//.*$", "")
  return s
end

-- Rule 2: excerpt of a hunk holding an added definition of fn, or nil.
-- A symbol (symbol=NAME): a struct, union, enum or variable defined at
-- column 0, "NAME {", "NAME[] = {" or "NAME = {".
local function names_symbol(s, name)
  local e = escape_pattern(name)
  return s:find("%f[%w_]" .. e .. "%s*{") ~= nil or s:find("%f[%w_]" .. e .. "%s*%[[^%]]*%]%s*=") ~= nil
    or s:find("%f[%w_]" .. e .. "%s*=%s*{") ~= nil
end

local function definition_excerpt(hunk, fn, matcher)
  matcher = matcher or names_function
  local L = hunk.lines
  local def
  for i, l in ipairs(L) do
    local body = l:sub(2)
    if l:sub(1, 1) == "+" and body:match("^[^%s#]") and matcher(body, fn) then
      -- a definition reaches '{' before ';'
      for j = i, #L do
        if L[j]:sub(1, 1) ~= "-" then
          local t = strip_c_noise(L[j]:sub(2))
          local b, s = t:find("{", 1, true), t:find(";", 1, true)
          if b and (not s or b < s) then def = i; break end
          if s then break end
        end
      end
      if def then break end
    end
  end
  if not def then return nil end
  -- back up over the contiguous comment/declaration lines above it
  local first = def
  while first > 1 do
    local prev = L[first - 1]
    local body = prev:sub(2)
    if prev:sub(1, 1) == "-" or not body:match("%S") or body:match("^}") or body:match(";%s*$") then
      break
    end
    first = first - 1
  end
  -- forward to the brace that closes the body (new side only)
  local depth, opened, last = 0, false, #L
  for j = def, #L do
    local c = L[j]:sub(1, 1)
    if c ~= "-" and c ~= "\\" then
      local t = strip_c_noise(L[j]:sub(2))
      for ch in t:gmatch("[{}]") do
        if ch == "{" then depth = depth + 1; opened = true else depth = depth - 1 end
      end
      if opened and depth <= 0 then last = j; break end
    end
  end
  -- recompute the @@ header for the excerpt
  local o, n = hunk.old, hunk.new
  for j = 1, first - 1 do
    local c = L[j]:sub(1, 1)
    if c == " " or L[j] == "" then o, n = o + 1, n + 1
    elseif c == "-" then o = o + 1
    elseif c == "+" then n = n + 1 end
  end
  local oc, nc = 0, 0
  local out = {}
  for j = first, last do
    local c = L[j]:sub(1, 1)
    if c == " " or L[j] == "" then oc, nc = oc + 1, nc + 1
    elseif c == "-" then oc = oc + 1
    elseif c == "+" then nc = nc + 1 end
    out[#out + 1] = L[j]
  end
  if first == 1 and last == #L then return { header = hunk.header, lines = L } end
  if oc == 0 then o = o - 1 end -- unified diff convention for an empty old side
  return {
    header = string.format("@@ -%d,%d +%d,%d @@", math.max(o, 0), oc, n, nc),
    lines = out,
  }
end

local function find_patch(ref)
  local err = check_path(ref)
  if err then return nil, err end
  local path = root .. "/" .. ref
  if read_file(path) and not is_dir(path) then return ref end
  -- short form: a series number, "0001" or "1"
  if ref:match("^%d+$") then
    local want = string.format("%04d-", tonumber(ref))
    local hits = {}
    for _, name in ipairs(list_dir(root .. "/patches")) do
      if name:sub(1, 5) == want and name:match("%.patch$") then hits[#hits + 1] = name end
    end
    if #hits == 1 then return "patches/" .. hits[1] end
    if #hits > 1 then
      return nil, "patch number " .. ref .. " is ambiguous: " .. table.concat(hits, ", ")
    end
    return nil, "no patch patches/" .. want .. "*.patch"
  end
  return nil, "no patch file " .. ref
end

local function render_patch(attr)
  local ref, why = find_patch(attr.patch)
  if not ref then return nil, why end
  local text = read_file(root .. "/" .. ref)
  local want_file, want_fn, want_sym = attr.file, attr["function"], attr.symbol
  local want_text = attr.contains
  if want_fn and want_sym then return nil, "use function= or symbol=, not both" end
  if want_text and (want_fn or want_sym) then
    return nil, "use contains= alone (with file= if needed), not with function= or symbol="
  end
  if not want_file and not want_fn and not want_sym and not want_text then
    local out = {}
    local lines = split_lines(text)
    -- drop the mbox "From <sha> <date>" line and the "-- \n<git version>" signature
    local last = #lines
    while last > 0 and lines[last] == "" do last = last - 1 end
    if last >= 2 and lines[last - 1] == "-- " then last = last - 2 end
    for i = 1, last do
      if not (i == 1 and lines[i]:match("^From %x+ ")) then out[#out + 1] = lines[i] end
    end
    while #out > 0 and out[#out] == "" do out[#out] = nil end
    return out, ref, ref
  end
  local files = parse_patch(text)
  if #files == 0 then return nil, ref .. " contains no diff" end
  local out = {}
  local picked = {}
  local matched_file = false
  for _, f in ipairs(files) do
    if not want_file or f.path == want_file then
      matched_file = true
      local chosen = {}
      for _, h in ipairs(f.hunks) do
        if want_text then
          -- contains="TEXT": the hunks with a line holding TEXT, whole;
          -- for a change to a struct or to the middle of a function
          for _, l in ipairs(h.lines) do
            if l:sub(2):find(want_text, 1, true) then
              chosen[#chosen + 1] = h
              break
            end
          end
        elseif want_sym then
          local ex = definition_excerpt(h, want_sym, names_symbol)
          if ex then chosen[#chosen + 1] = ex end
        elseif not want_fn then
          chosen[#chosen + 1] = h
        elseif names_function(h.ctx, want_fn) then
          chosen[#chosen + 1] = h
        else
          local ex = definition_excerpt(h, want_fn)
          if ex then chosen[#chosen + 1] = ex end
        end
      end
      if #chosen > 0 then
        picked[#picked + 1] = { file = f, hunks = chosen }
        if #f.header == 0 then
          out[#out + 1] = "--- a/" .. f.path
          out[#out + 1] = "+++ b/" .. f.path
        end
        for _, l in ipairs(f.header) do
          if l:match("^%-%-%- ") or l:match("^%+%+%+ ") then out[#out + 1] = l end
        end
        for _, h in ipairs(chosen) do
          out[#out + 1] = h.header
          for _, l in ipairs(h.lines) do out[#out + 1] = l end
        end
      end
    end
  end
  if want_file and not matched_file then
    local have = {}
    for _, f in ipairs(files) do have[#have + 1] = f.path end
    return nil, string.format("%s does not touch %s (it touches: %s)", ref, want_file,
      table.concat(have, ", "))
  end
  if #out == 0 then
    if want_text then
      return nil, string.format("no hunk of %s%s contains '%s'", ref,
        want_file and (" in " .. want_file) or "", want_text)
    end
    if want_sym then
      return nil, string.format("no hunk of %s%s defines %s", ref,
        want_file and (" in " .. want_file) or "", want_sym)
    end
    return nil, string.format("no hunk of %s%s belongs to function %s()", ref,
      want_file and (" in " .. want_file) or "", want_fn)
  end
  -- short label: "mm/memory.c: do_anonymous_page() (patch 4)"
  local num = ref:match("patches/0*(%d+)%-") or ref
  local files_named = {}
  for _, pk in ipairs(picked) do files_named[#files_named + 1] = pk.file.path end
  local label = table.concat(files_named, ", ")
  if want_fn then label = label .. ": " .. want_fn .. "()" end
  if want_sym then label = label .. ": " .. want_sym end
  -- one new file, one excerpt of added lines: show it as the file itself
  if #picked == 1 and picked[1].file.new_file and #picked[1].hunks == 1 then
    local h = picked[1].hunks[1]
    local plain, all_added = {}, true
    for _, l in ipairs(h.lines) do
      if l:sub(1, 1) == "+" then plain[#plain + 1] = l:sub(2)
      elseif l:sub(1, 1) ~= "\\" then all_added = false end
    end
    local start = tonumber(h.header:match("^@@ %-%d+,?%d* %+(%d+)")) or 1
    if all_added and #plain > 0 then
      local last = start + #plain - 1
      local where = (start == 1 and #plain == #h.lines) and "new file" or
        string.format("new file, lines %d\u{2013}%d", start, last)
      label = label .. " (" .. where .. ", patch " .. num .. ")"
      return plain, ref, label, { path = picked[1].file.path, start = start }
    end
  end
  label = label .. " (patch " .. num .. ")"
  return out, ref, label
end

local function render_include(attr)
  local ref = attr.include
  local err = check_path(ref)
  if err then return nil, err end
  local path = root .. "/" .. ref
  if is_dir(path) then return nil, ref .. " is a directory" end
  local text = read_file(path)
  if not text then return nil, "no file " .. ref end
  local lines = split_lines(text)
  if attr.marker then
    local region, why = extract_marker(lines, attr.marker, ref)
    if not region then return nil, why end
    return region, ref, ref .. " (" .. attr.marker .. ")"
  end
  return strip_markers(lines), ref, ref
end

local function guess_language(path, first_line)
  if path:match("%.patch$") or path:match("%.diff$") then return "diff" end
  if path:match("%.[ch]$") then return "c" end
  if path:match("%.sh$") then return "bash" end
  if path:match("%.py$") then return "python" end
  if path:match("%.mk$") or path:match("Makefile$") then return "makefile" end
  if path:match("%.dot$") then return "dot" end
  if first_line and first_line:match("^#!.*sh") then return "bash" end
  return nil
end

------------------------------------------------------------------------
-- the filter

local function expand(block, chapter)
  local attr = block.attributes
  if not attr.include and not attr.patch then return nil end
  local where = chapter or "(unknown chapter)"
  local line = find_line(chapter, attr.include or attr.patch,
    attr.marker or attr["function"] or attr.symbol or attr.file)
  if line then where = where .. ":" .. line end
  local function fail(msg)
    errors[#errors + 1] = string.format("%s: broken reference %s: %s", where, describe(attr), msg)
    return pandoc.CodeBlock("")
  end
  if attr.include and attr.patch then return fail("use include= or patch=, not both") end
  if attr.include and (attr.file or attr["function"] or attr.symbol) then
    return fail("file= and function= select hunks of a patch; use marker= with include=")
  end
  if attr.patch and attr.marker then return fail("marker= works with include=, not patch=") end
  if block.text:match("%S") then
    return fail("the block must be empty; its text would be replaced")
  end
  local lines, ref, label, plain
  if attr.include then
    lines, ref, label = render_include(attr)
  else
    lines, ref, label, plain = render_patch(attr)
  end
  if not lines then return fail(ref) end
  if #lines == 0 then return fail(ref .. " is empty") end

  local classes = {}
  local nolabel = false
  for _, c in ipairs(block.classes) do
    if c == "nolabel" then nolabel = true else classes[#classes + 1] = c end
  end
  if #classes == 0 then
    local lang
    if plain then lang = guess_language(plain.path, lines[1]) or "c"
    else lang = attr.patch and "diff" or guess_language(ref, lines[1]) end
    if lang then classes[1] = lang end
  end
  local keep = {}
  for k, v in pairs(attr) do
    if k ~= "include" and k ~= "marker" and k ~= "patch" and k ~= "file" and k ~= "function"
        and k ~= "symbol" then
      keep[k] = v
    end
  end
  if plain then
    classes[#classes + 1] = "numberLines"
    keep["startFrom"] = tostring(plain.start)
  end
  local code = pandoc.CodeBlock(table.concat(lines, "\n"),
    pandoc.Attr(block.identifier, classes, keep))
  if nolabel then return code end
  local caption = pandoc.Para({ pandoc.Code(label) })
  return pandoc.Div({ caption, code }, pandoc.Attr("", { "listing" }, { { "data-source", ref } }))
end

local function walk_chapter(blocks, chapter)
  return pandoc.walk_block(pandoc.Div(blocks), {
    CodeBlock = function(b) return expand(b, chapter) end,
  }).content
end

function Pandoc(doc)
  local m = doc.meta["cm-root"]
  if m then
    root = pandoc.utils.stringify(m)
  elseif os.getenv("CM_ROOT") and os.getenv("CM_ROOT") ~= "" then
    root = os.getenv("CM_ROOT")
  end
  local default_chapter
  if #PANDOC_STATE.input_files == 1 and PANDOC_STATE.input_files[1] ~= "-" then
    default_chapter = PANDOC_STATE.input_files[1]
  end
  local out = {}
  local pending = {}
  local function flush()
    if #pending > 0 then
      for _, b in ipairs(walk_chapter(pending, default_chapter)) do out[#out + 1] = b end
      pending = {}
    end
  end
  for _, b in ipairs(doc.blocks) do
    if b.t == "Div" and b.attributes["cm-source"] then
      flush()
      -- keep the wrapper: book.lua reads the chapter's name from it, then unwraps it
      out[#out + 1] = pandoc.Div(walk_chapter(b.content, b.attributes["cm-source"]), b.attr)
    else
      pending[#pending + 1] = b
    end
  end
  flush()
  if #errors > 0 then
    local msg = string.format("include.lua: %d broken reference%s:\n  %s", #errors,
      #errors == 1 and "" or "s", table.concat(errors, "\n  "))
    error(msg, 0)
  end
  doc.blocks = out
  return doc
end
