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
     is taken up to NAME's own closing brace: the first '}' at column 0,
     or the line before the first comment or code at column 0 (the hunk
     started after NAME's end).  Git names the function in which a hunk
     starts, so such a hunk may go on into the next function, which is
     cut off; a hunk left with no change is dropped;
  2. otherwise, a hunk that defines NAME - a line at column 0 (not '#',
     not a comment) whose code (strings and comments taken out) contains
     "NAME(" and reaches a '{' before any ';'; an added line, or a context
     line if NAME's body in the hunk has changes - contributes only that
     definition: from the comment and declaration lines directly above it
     (contiguous non-blank lines) down to the '}' that closes its body,
     with a recomputed @@ header.  This is how a function in a brand-new
     file (one big hunk) is shown;
  3. a definition that is a stub - in a branch compiled only when a
     CONFIG_ option is off: #ifndef CONFIG_X, #if !IS_ENABLED(CONFIG_X),
     #if !defined(CONFIG_X), or the #else/#elif of #ifdef CONFIG_X or
     #if IS_ENABLED(CONFIG_X) - is left out when the patch defines NAME
     anywhere else.  The #if lines above it are read from the whole file
     as the series (patches/NNNN-*.patch, in order) leaves it, when the
     series creates the file; else from the hunk above it.
Hunks are grouped per file and keep their --- / +++ lines.

Exercises: a listing in chapter NN (cm-source "chapters/NN-...") of patch
NN that shows added code of a function that labs/chNN/skeleton names
("todo FILE FUNCTION", "revert FILE FUNCTION": `make exercise CH=NN`
leaves it for the reader to write) gets the attribute cm-exercise="N:
KIND:FILE:FUNCTION ..." (N: its TODO number) and, after its code block,
the same listing without those functions (as code blocks of class
cm-student; none if nothing is left).  book/edition.lua, the next
filter, picks the edition's version and takes the marks off.

Chapter names: the book build wraps each chapter in a Div with attribute
cm-source="chapters/NN-slug.md" (see book/book.mk); the filter keeps it
for the filters after it (book/book.lua unwraps it).
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

-- The code of a line, without strings, comments, and the start of a
-- comment that goes on to the next line: "/* calls NAME (once) */" is
-- not a definition of NAME.
local function code_of(s)
  return (strip_c_noise(s):gsub("/%*.*$", ""))
end

-- A sub-hunk: lines FIRST..LAST of HUNK with a recomputed @@ header (git's
-- function name after the second @@ is kept when the excerpt starts at
-- the hunk's first line).
local function sub_hunk(hunk, first, last, keep_ctx) -- keep_ctx: nil = when FIRST is 1
  local L = hunk.lines
  if first == 1 and last == #L and keep_ctx ~= false then return hunk end
  if keep_ctx == nil then keep_ctx = first == 1 end
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
  -- unified diff convention for an empty side: the number of the line
  -- before (the hunk's own header already says so when FIRST is 1)
  if oc == 0 and first > 1 then o = o - 1 end
  if nc == 0 and first > 1 then n = n - 1 end
  local ctx = (keep_ctx and (hunk.ctx or "") ~= "") and (" " .. hunk.ctx) or ""
  return {
    header = string.format("@@ -%d,%d +%d,%d @@%s", math.max(o, 0), oc, math.max(n, 0), nc, ctx),
    ctx = keep_ctx and hunk.ctx or "", lines = out, old = o, new = n,
  }
end

-- The line of the new side of HUNK at which line I of it stands.
local function new_line_of(hunk, i)
  local n = hunk.new
  for j = 1, i - 1 do
    local c = hunk.lines[j]:sub(1, 1)
    if c == " " or c == "+" or hunk.lines[j] == "" then n = n + 1 end
  end
  return n
end

-- Does line I of the lines L (diff lines, or plain lines if PLAIN) start
-- a function definition?  Returns the function's name.  A definition
-- starts at column 0 (not a comment, a "#" line or a brace), names
-- "NAME(" in its code, and reaches "{" before ";".
local function definition_at(L, i, plain)
  local function text(j)
    local l = L[j]
    if plain then return l end
    local c = l:sub(1, 1)
    if c == "-" or c == "\\" then return nil end
    return l:sub(2)
  end
  local body = text(i)
  if not body or not body:match("^[%a_]") then return nil end
  local name = code_of(body):match("([%a_][%w_]*)%s*%(")
  if not name then return nil end
  for j = i, #L do
    local t = text(j)
    if t then
      t = code_of(t)
      local b, s = t:find("{", 1, true), t:find(";", 1, true)
      if b and (not s or b < s) then return name end
      if s then return nil end
    end
  end
  return nil
end

-- The excerpt of HUNK from the definition that starts at line DEF: the
-- comment and declaration lines directly above it, down to the brace
-- that closes its body (new side only), or the end of the hunk.
local function excerpt_range(hunk, def)
  local L = hunk.lines
  local first = def
  while first > 1 do
    local body = L[first - 1]:sub(2)
    if not body:match("%S") or body:match("^}") or body:match(";%s*$") then break end
    first = first - 1
  end
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
  local changed = false
  for j = first, last do
    local c = L[j]:sub(1, 1)
    if c == "+" or c == "-" then changed = true end
  end
  return first, last, changed
end

local function excerpt_at(hunk, def)
  local L = hunk.lines
  local first, last, changed = excerpt_range(hunk, def)
  if first == 1 and last == #L and (hunk.ctx or "") == "" then return hunk, changed end
  -- git's function name after @@ is the one before the definition: none
  local ex = sub_hunk({ lines = L, old = hunk.old, new = hunk.new, ctx = "" }, first, last, false)
  return ex, changed
end

-- Rule 2: the excerpt of HUNK that holds a definition of FN (MATCHER
-- tells whether a line of code names it; a function by default).  The
-- definition is an added line; for a function, also a context line when
-- the function's body in the hunk has changed lines (a change inside a
-- function that git names the hunk after the one before it).  Returns
-- the excerpt, the line of the new side the definition is on, and its
-- index in the hunk; nil if the hunk has no such definition.
local function definition_excerpt(hunk, fn, matcher)
  local context_too = matcher == nil
  matcher = matcher or names_function
  local L = hunk.lines
  for i, l in ipairs(L) do
    local c, body = l:sub(1, 1), l:sub(2)
    if (c == "+" or (c == " " and context_too)) and body:match("^[^%s#]")
        and matcher(code_of(body), fn) then
      -- a definition reaches '{' before ';'
      local def
      for j = i, #L do
        if L[j]:sub(1, 1) ~= "-" then
          local t = code_of(L[j]:sub(2))
          local b, sc = t:find("{", 1, true), t:find(";", 1, true)
          if b and (not sc or b < sc) then def = i; break end
          if sc then break end
        end
      end
      if def then
        local ex, changed = excerpt_at(hunk, def)
        if c == "+" or changed then return ex, new_line_of(hunk, def), def end
      end
    end
  end
  return nil
end

-- Rule 1 for a hunk that git names after FN: it starts after FN's first
-- line, and before anything else at column 0, so inside FN or between
-- FN's closing brace and the next definition's comment.  It may run on
-- into the next definition: keep it up to FN's own closing brace, the
-- first "}" at column 0, or up to the first line outside any body (code
-- or a comment at column 0, not a label or a #-line) if it comes first.
-- nil when the part that is left changes nothing (the change is all
-- past FN).
-- Can BODY (a line of C) be inside a function's body?  Indented by a
-- tab, the opening brace, a #-line, a label or blank: yes.  A comment
-- or code at column 0 is outside every body.
local function in_body(body)
  return body:match("^\t") or body:match("^[{}]") or body:match("^#")
    or body:match("^[%a_][%w_]*:%s*$") or not body:match("%S")
end

local function function_end(hunk)
  local L = hunk.lines
  local last = #L
  for i, l in ipairs(L) do
    local c, body = l:sub(1, 1), l:sub(2)
    if c ~= "-" and c ~= "\\" then
      if body:match("^}") then
        last = i
        break
      elseif not in_body(body) then
        last = i - 1
        break
      end
    end
  end
  return last
end

local function trim_to_function(hunk, fn)
  local L = hunk.lines
  local last = function_end(hunk)
  -- no trailing blank context
  while last > 0 and (L[last] == "" or L[last] == " ") do last = last - 1 end
  local changes = false
  for j = 1, last do
    local c = L[j]:sub(1, 1)
    if c == "+" or c == "-" then changes = true end
  end
  if not changes then return nil end
  return sub_hunk(hunk, 1, last)
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

------------------------------------------------------------------------
-- stubs: a definition compiled only when a CONFIG_ option is off

local parsed_cache = {}
local function parsed(ref)
  if not parsed_cache[ref] then
    parsed_cache[ref] = parse_patch(read_file(root .. "/" .. ref) or "")
  end
  return parsed_cache[ref]
end

-- Apply the hunks of one file's diff to CONTENT (a list of lines).
local function apply_hunks(content, hunks)
  local out, pos = {}, 1
  for _, h in ipairs(hunks) do
    local oc = 0
    for _, l in ipairs(h.lines) do
      local c = l:sub(1, 1)
      if c == " " or c == "-" or l == "" then oc = oc + 1 end
    end
    local upto = (oc == 0) and h.old or (h.old - 1)
    while pos <= upto do out[#out + 1] = content[pos]; pos = pos + 1 end
    for _, l in ipairs(h.lines) do
      local c = l:sub(1, 1)
      if c == " " or l == "" then out[#out + 1] = content[pos] or l:sub(2); pos = pos + 1
      elseif c == "-" then pos = pos + 1
      elseif c == "+" then out[#out + 1] = l:sub(2) end
    end
  end
  while pos <= #content do out[#out + 1] = content[pos]; pos = pos + 1 end
  return out
end

-- The lines of PATH once the series, patches/NNNN-*.patch in order, is
-- applied up to and including REF; nil when the series does not create
-- PATH (a file of the kernel itself, which the repository does not hold).
local series_cache = {}
local function series_file(ref, path)
  local key = ref .. "\0" .. path
  if series_cache[key] ~= nil then return series_cache[key] or nil end
  local content
  local dir, base = ref:match("^(.*)/(%d%d%d%d%-[^/]*%.patch)$")
  if dir then
    local names = list_dir(root .. "/" .. dir)
    table.sort(names)
    for _, name in ipairs(names) do
      if name:match("^%d%d%d%d%-.*%.patch$") and name <= base then
        for _, f in ipairs(parsed(dir .. "/" .. name)) do
          if f.path == path then
            if f.new_file then content = {} end
            if content then content = apply_hunks(content, f.hunks) end
          end
        end
      end
    end
  end
  series_cache[key] = content or false
  return content
end

-- Is line AT of LINES (before it: LINES[1 .. AT-1]) in a branch compiled
-- only when a CONFIG_ option is off: "#ifndef CONFIG_X", "#if
-- !IS_ENABLED(CONFIG_X)" or "#if !defined(CONFIG_X)", or the "#else"
-- (or "#elif") of "#ifdef CONFIG_X", "#if IS_ENABLED(CONFIG_X)"...?
local function in_config_off_branch(lines, at)
  local stack = {}
  for i = 1, at - 1 do
    local d, rest = (lines[i] or ""):match("^%s*#%s*(%a+)(.*)$")
    if d == "if" or d == "ifdef" or d == "ifndef" then
      local on -- true: compiled when the option is on; false: when it is off
      if rest:match("CONFIG_") then
        if d == "ifdef" then on = true
        elseif d == "ifndef" then on = false
        else on = not rest:match("^%s*!") end
      end
      stack[#stack + 1] = { on = on, alt = false }
    elseif (d == "else" or d == "elif") and #stack > 0 then
      stack[#stack].alt = true
    elseif d == "endif" then
      stack[#stack] = nil
    end
  end
  for _, e in ipairs(stack) do
    if e.on ~= nil and e.on == e.alt then return true end
  end
  return false
end

-- Is the code at new-side line NEW_LINE of FILE (line I of HUNK) a stub?
-- A file the series creates is rebuilt to read every #if above it; in a
-- kernel file only the lines of the hunk above it are read.
local function is_stub(ref, file, hunk, i, new_line)
  local whole = series_file(ref, file.path)
  if whole then return in_config_off_branch(whole, new_line) end
  local above = {}
  for j = 1, i - 1 do
    local l = hunk.lines[j]
    if l:sub(1, 1) ~= "-" and l:sub(1, 1) ~= "\\" then above[#above + 1] = l:sub(2) end
  end
  return in_config_off_branch(above, #above + 1)
end

-- The functions whose added lines a listing shows, as "FILE:NAME": a
-- hunk's lines belong to the function git names it after, and to each
-- function defined in it from its definition, up to a "}" at column 0
-- or a line outside any body (a comment or code at column 0).
local function functions_shown(picked)
  local seen, list = {}, {}
  for _, pk in ipairs(picked) do
    for _, h in ipairs(pk.hunks) do
      local cur = (h.ctx or ""):match("([%a_][%w_]*)%s*%(")
      for i, l in ipairs(h.lines) do
        local c, body = l:sub(1, 1), l:sub(2)
        if c ~= "-" and c ~= "\\" then
          local def = definition_at(h.lines, i)
          if def then
            cur = def
          elseif not in_body(body) then
            cur = nil -- a comment or code at column 0: between functions
          end
        end
        if c == "+" and cur then
          local k = pk.file.path .. ":" .. cur
          if not seen[k] then seen[k] = true; list[#list + 1] = k end
        end
        if c ~= "-" and body:match("^}") then cur = nil end
      end
    end
  end
  return list
end

------------------------------------------------------------------------
-- the exercise of a chapter (see book/edition.lua)

-- The functions `make exercise CH=NN` takes out of patch NN:
-- labs/chNN/skeleton's "todo FILE FUNCTION" and "revert FILE FUNCTION"
-- lines, numbered as labs/host/skeleton.sh numbers its TODOs.
local skeleton_cache = {}
local function skeleton_of(nn)
  if skeleton_cache[nn] then return skeleton_cache[nn] end
  local todos = {}
  local text = read_file(string.format("%s/labs/ch%02d/skeleton", root, nn))
  for line in ((text or "") .. "\n"):gmatch("(.-)\n") do
    local kind, file, func = line:match("^%s*(%a+)%s+(%S+)%s+([%a_][%w_]*)%s*$")
    if kind == "todo" or kind == "revert" then
      todos[#todos + 1] = { n = #todos + 1, kind = kind, file = file, func = func }
    end
  end
  skeleton_cache[nn] = todos
  return todos
end

-- HUNK without FN's code: without the part at its start that belongs to
-- FN (git names the hunk after it), and without FN's definitions (with
-- the comment above them).  The parts left that still change something,
-- as hunks.
local function omit_function(hunk, fn)
  local L = hunk.lines
  local drop = {}
  if names_function(hunk.ctx or "", fn) then
    for j = 1, function_end(hunk) do drop[j] = true end
  end
  for i, l in ipairs(L) do
    local c = l:sub(1, 1)
    if c ~= "-" and c ~= "\\" and definition_at(L, i) == fn then
      local first, last = excerpt_range(hunk, i)
      for j = first, last do drop[j] = true end
    end
  end
  local parts, first = {}, nil
  local function close(last)
    if not first then return end
    -- no blank line at either end, and a change that is not blank
    local a, b = first, last
    while a <= b and not L[a]:sub(2):match("%S") do a = a + 1 end
    while b >= a and not L[b]:sub(2):match("%S") do b = b - 1 end
    local changed = false
    for j = a, b do
      local c = L[j]:sub(1, 1)
      if (c == "+" or c == "-") and L[j]:sub(2):match("%S") then changed = true end
    end
    if changed then
      -- git's function name stays right unless code before A was dropped
      parts[#parts + 1] = sub_hunk(hunk, a, b, first == 1)
    end
    first = nil
  end
  for j = 1, #L do
    if drop[j] then close(j - 1) elseif not first then first = j end
  end
  close(#L)
  return parts
end

-- PICKED without the functions of TODOS (their file and name).
local function omit_functions(picked, todos)
  local out = {}
  for _, pk in ipairs(picked) do
    local hunks = pk.hunks
    for _, t in ipairs(todos) do
      if t.file == pk.file.path then
        local left = {}
        for _, h in ipairs(hunks) do
          for _, part in ipairs(omit_function(h, t.func)) do left[#left + 1] = part end
        end
        hunks = left
      end
    end
    if #hunks > 0 then out[#out + 1] = { file = pk.file, hunks = hunks } end
  end
  return out
end

-- The text of PICKED, a list of { file =, hunks = }, as a diff.
local function as_diff(picked)
  local out = {}
  for _, pk in ipairs(picked) do
    local f = pk.file
    if #f.header == 0 then
      out[#out + 1] = "--- a/" .. f.path
      out[#out + 1] = "+++ b/" .. f.path
    end
    for _, l in ipairs(f.header) do
      if l:match("^%-%-%- ") or l:match("^%+%+%+ ") then out[#out + 1] = l end
    end
    for _, h in ipairs(pk.hunks) do
      out[#out + 1] = h.header
      for _, l in ipairs(h.lines) do out[#out + 1] = l end
    end
  end
  return out
end

-- One excerpt of added lines of a file the patch creates: its lines as in
-- the new file, and the number of the first; nil for anything else.
local function as_plain(picked)
  if not (#picked == 1 and picked[1].file.new_file and #picked[1].hunks == 1) then return nil end
  local h = picked[1].hunks[1]
  local plain = {}
  for _, l in ipairs(h.lines) do
    if l:sub(1, 1) == "+" then plain[#plain + 1] = l:sub(2)
    elseif l:sub(1, 1) ~= "\\" then return nil end
  end
  if #plain == 0 then return nil end
  return plain, tonumber(h.header:match("^@@ %-%d+,?%d* %+(%d+)")) or 1
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
  local selected = {}
  local real_found = false
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
        else
          -- function=: rule 1 (git names the function), cut at its
          -- closing brace; else rule 2 (the hunk defines it).  Either
          -- may be a stub for a CONFIG_ option that is off.
          local ex, at, i
          if names_function(h.ctx, want_fn) then
            ex = trim_to_function(h, want_fn)
            at, i = h.new, 1
          end
          if not ex then ex, at, i = definition_excerpt(h, want_fn) end
          if ex then
            local stub = is_stub(ref, f, h, i, at)
            if not stub then real_found = true end
            chosen[#chosen + 1] = { hunk = ex, stub = stub }
          end
        end
      end
      selected[#selected + 1] = { file = f, chosen = chosen }
    end
  end
  for _, sel in ipairs(selected) do
    local f, chosen = sel.file, sel.chosen
    if want_fn then
      -- the stubs give way to the real definition, if the patch has one
      local keep = {}
      for _, c in ipairs(chosen) do
        if not (c.stub and real_found) then keep[#keep + 1] = c.hunk end
      end
      chosen = keep
    end
    if #chosen > 0 then picked[#picked + 1] = { file = f, hunks = chosen } end
  end
  if want_file and not matched_file then
    local have = {}
    for _, f in ipairs(files) do have[#have + 1] = f.path end
    return nil, string.format("%s does not touch %s (it touches: %s)", ref, want_file,
      table.concat(have, ", "))
  end
  if #picked == 0 then
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
  local plain, start = as_plain(picked)
  if plain then
    local h = picked[1].hunks[1]
    local last = start + #plain - 1
    local where = (start == 1 and #plain == #h.lines) and "new file" or
      string.format("new file, lines %d\u{2013}%d", start, last)
    label = label .. " (" .. where .. ", patch " .. num .. ")"
    return plain, ref, label, { path = picked[1].file.path, start = start }, picked
  end
  label = label .. " (patch " .. num .. ")"
  return as_diff(picked), ref, label, nil, picked
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
  local lines, ref, label, plain, picked
  if attr.include then
    lines, ref, label = render_include(attr)
  else
    lines, ref, label, plain, picked = render_patch(attr)
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
        and k ~= "symbol" and k ~= "contains" then
      keep[k] = v
    end
  end
  if plain then
    classes[#classes + 1] = "numberLines"
    keep["startFrom"] = tostring(plain.start)
  end
  local code = pandoc.CodeBlock(table.concat(lines, "\n"),
    pandoc.Attr(block.identifier, classes, keep))

  -- A listing of chapter NN's own patch that shows code of a function
  -- its exercise takes out: say which (cm-exercise="N:KIND:FILE:NAME
  -- ..."), and add the listing without them, for the student edition,
  -- in code blocks of class cm-student (none if nothing is left).
  -- book/edition.lua keeps one or the other and drops these attributes.
  local nn = chapter and chapter:match("chapters/(%d%d)%-[^/]*$")
  local num = ref:match("^patches/(%d%d%d%d)%-")
  local hits = {}
  if picked and nn and num and tonumber(nn) == tonumber(num) then
    local shown = {}
    for _, k in ipairs(functions_shown(picked)) do shown[k] = true end
    for _, t in ipairs(skeleton_of(tonumber(nn))) do
      if shown[t.file .. ":" .. t.func] then hits[#hits + 1] = t end
    end
  end
  local blocks = { code }
  local div_attr = { { "data-source", ref } }
  if #hits > 0 then
    local names = {}
    for _, t in ipairs(hits) do
      names[#names + 1] = string.format("%d:%s:%s:%s", t.n, t.kind, t.file, t.func)
    end
    div_attr[#div_attr + 1] = { "cm-exercise", table.concat(names, " ") }
    local left = omit_functions(picked, hits)
    local student = {}
    local function add(text, start)
      local cl = { "cm-student" }
      for _, c in ipairs(classes) do if c ~= "numberLines" then cl[#cl + 1] = c end end
      local kv = {}
      if start then cl[#cl + 1] = "numberLines"; kv.startFrom = tostring(start) end
      student[#student + 1] = pandoc.CodeBlock(table.concat(text, "\n"), pandoc.Attr("", cl, kv))
    end
    if plain then
      -- the parts of one new file: each as the file's own lines
      for _, h in ipairs(left[1] and left[1].hunks or {}) do
        local text, start = as_plain({ { file = left[1].file, hunks = { h } } })
        if text then add(text, start) end
      end
    elseif #left > 0 then
      add(as_diff(left))
    end
    for _, b in ipairs(student) do blocks[#blocks + 1] = b end
  end
  if nolabel then
    if #hits == 0 then return code end
    return pandoc.Div(blocks, pandoc.Attr("", {}, div_attr))
  end
  table.insert(blocks, 1, pandoc.Para({ pandoc.Code(label) }))
  return pandoc.Div(blocks, pandoc.Attr("", { "listing" }, div_attr))
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
