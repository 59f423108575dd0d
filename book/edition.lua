--[[
edition.lua - the student edition and the instructor edition from the
same chapters (run first, before include.lua).

An exercise's worked answer sits in the chapter, inside its list item:

    1. The question. [Medium, 30 minutes]{.effort}

       ::: answer
       The worked answer.
       :::

Metadata cm-edition=instructor keeps every answer, under an "Answer"
label; anything else (the default, the student edition) drops them, so
that nothing of an answer reaches the output.  The effort span (a
difficulty and a time) is printed in both editions.
]]

local instructor = false

function Meta(m)
  instructor = m["cm-edition"] and pandoc.utils.stringify(m["cm-edition"]) == "instructor"
end

function Div(d)
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

function Span(s)
  if not s.classes:includes("effort") then return nil end
  local inl = pandoc.List({ pandoc.Str("(") })
  inl:extend(s.content)
  inl:insert(pandoc.Str(")"))
  return pandoc.Emph(inl)
end

return { { Meta = Meta }, { Div = Div, Span = Span } }
