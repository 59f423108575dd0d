--[[
edition.lua - the student edition and the instructor edition from the
same chapters (run after include.lua, before book.lua).

Answers.  An exercise's worked answer sits in the chapter, inside its
list item:

    1. The question. [Medium, 30 minutes]{.effort}

       ::: answer
       The worked answer.
       :::

Metadata cm-edition=instructor keeps every answer, under an "Answer"
label; anything else (the default, the student edition) drops them, so
that nothing of an answer reaches the output.  The effort span (a
difficulty and a time) is printed in both editions.

The code of the exercise.  `make exercise CH=N` gives the reader the
kernel at chapter N with some functions of patch N to write: those that
labs/chNN/skeleton names on its "todo FILE FUNCTION" lines (the body is
hollowed out) and "revert FILE FUNCTION" lines (the body goes back to
chapter N-1's); labs/host/skeleton.sh numbers them TODO 1, 2, ... in
that order.  A listing of chapter N taken from patch N that shows code
of one of them would print the answer.  include.lua marks such a
listing (attribute cm-exercise="N:KIND:FILE:NAME ...") and adds the
listing's code without those functions, if any is left, in code blocks
of class cm-student.  The instructor edition keeps the listing as it
is.  The student edition keeps the cm-student blocks, or none, and adds
a box (class exercise-todo) that says which TODO the missing code is and
how to get it: `make exercise CH=N`, the instructor edition, the patch.
The listing keeps its number in both editions.
]]

local instructor = false

local function Meta(m)
  instructor = m["cm-edition"] and pandoc.utils.stringify(m["cm-edition"]) == "instructor"
end

local function Div(d)
  if not d.classes:includes("answer") then return nil end
  if not instructor then return {} end
  local label = pandoc.Strong({ pandoc.Str("Answer.") })
  local first = d.content[1]
  if first and first.t == "Para" then
    first.content:insert(1, pandoc.Space())
    first.content:insert(1, label)
  else
    d.content:insert(1, pandoc.Para({ label }))
  end
  return d
end

local function Span(s)
  if not s.classes:includes("effort") then return nil end
  local inl = pandoc.List({ pandoc.Str("(") })
  inl:extend(s.content)
  inl:insert(pandoc.Str(")"))
  return pandoc.Emph(inl)
end

------------------------------------------------------------------------
-- the exercise's code

local function code(s) return pandoc.Code(s) end

-- "TODO 1", "TODOs 1 and 2", "TODOs 1, 2 and 3"
local function todo_names(hits)
  local nums = {}
  for _, t in ipairs(hits) do nums[#nums + 1] = tostring(t.n) end
  if #nums == 1 then return "TODO " .. nums[1] end
  return "TODOs " .. table.concat(nums, ", ", 1, #nums - 1) .. " and " .. nums[#nums]
end

-- The paragraph that says which TODOs a listing's code belongs to and
-- how to get it.  LEFT: the listing still shows the rest of its code.
local function todo_para(hits, nn, ref, left)
  local sp = pandoc.Space()
  local what = pandoc.List({
    pandoc.Strong({ pandoc.Str(todo_names(hits) .. " of this chapter's exercise.") }), sp,
  })
  if left then
    what:insert(pandoc.Str("The student edition leaves the answer out of this listing:"))
  else
    what:insert(pandoc.Str("This listing is the answer, so the student edition leaves it out."))
  end
  what:extend({ sp, code(string.format("make exercise CH=%d", nn)), sp,
    pandoc.Str("gives you the tree with") })
  for i, t in ipairs(hits) do
    if i > 1 then what:insert(pandoc.Str(i == #hits and " and" or ",")) end
    what:insert(sp)
    if t.kind == "revert" then
      what:extend({ pandoc.Str("TODO " .. t.n .. " above the body"), sp, code(t.func .. "()"), sp,
        pandoc.Str("in"), sp, code(t.file), sp, pandoc.Str("had one chapter earlier, for you to change") })
    else
      what:extend({ pandoc.Str("TODO " .. t.n .. " in place of the body of"), sp, code(t.func .. "()"),
        sp, pandoc.Str("in"), sp, code(t.file) })
    end
  end
  what:extend({ pandoc.Str(#hits == 1 and ", with its hint." or ", each with its hint."), sp,
    pandoc.Str("The instructor edition ("), code("make book-instructor"),
    pandoc.Str(") prints the listing whole; the reference code is in"), sp, code(ref),
    pandoc.Str(".") })
  return pandoc.Div({ pandoc.Para(what) }, pandoc.Attr("", { "exercise-todo" }))
end

-- A listing that include.lua marked (cm-exercise): the instructor
-- edition keeps its code; the student edition keeps the code without
-- the exercise's functions (the cm-student blocks), if any is left, and
-- says which TODOs are missing.  Numbered as the listing was.
local function exercise_listing(d)
  local marks = d.attributes["cm-exercise"]
  if not marks then return nil end
  d.attributes["cm-exercise"] = nil
  local full, student, caption = {}, {}, nil
  for i, b in ipairs(d.content) do
    if b.t == "CodeBlock" and b.classes:includes("cm-student") then
      b.classes = b.classes:filter(function(c) return c ~= "cm-student" end)
      student[#student + 1] = b
    elseif b.t == "CodeBlock" then
      full[#full + 1] = b
    elseif i == 1 and b.t == "Para" then
      caption = b
    end
  end
  if instructor then
    local blocks = pandoc.List(caption and { caption } or {})
    blocks:extend(full)
    d.content = blocks
    return d
  end
  local hits = {}
  for n, kind, file, func in marks:gmatch("(%d+):(%a+):([^:%s]+):([%w_]+)") do
    hits[#hits + 1] = { n = tonumber(n), kind = kind, file = file, func = func }
  end
  local ref = d.attributes["data-source"] or ""
  local nn = tonumber(ref:match("^patches/(%d%d%d%d)%-") or "0")
  -- the listing's identifier (on its code block) goes to the Div
  for _, b in ipairs(full) do
    if b.identifier ~= "" then d.identifier = b.identifier end
  end
  local blocks = pandoc.List(caption and { caption } or {})
  blocks:extend(student)
  blocks:insert(todo_para(hits, nn, ref, #student > 0))
  d.content = blocks
  if #student == 0 then d.classes:insert("exercise-only") end
  return d
end

local function Pandoc(doc)
  doc.blocks = pandoc.walk_block(pandoc.Div(doc.blocks), { Div = exercise_listing }).content
  return doc
end

return { { Meta = Meta }, { Div = Div, Span = Span }, { Pandoc = Pandoc } }
