--[[
book.lua - the book-wide pass of "Containing Memory", run after include.lua.

It numbers and cross-references, and it refuses a book a reader would trip
over.  Conventions (chapters/TEMPLATE.md states them for authors):

  Figures    ![Caption.](diagrams/NAME.svg) alone in a paragraph becomes
             "Figure N.M: Caption." with the identifier fig-NAME (or the
             image's own {#id}); the SVG is put inline (searchable text).
  Listings   every listing from include.lua becomes "Listing N.M: label";
             an {#lst-...} identifier on the block moves to the listing.
  Refs       [](#fig-x), [](#lst-x), [](#ch-x), [](#app-x) with an empty
             text are filled in: "Figure 3.1", "Listing 4.2", "chapter 3",
             "appendix A".  Any link to #ID must resolve.  The word is not
             written before it: "Figure [](#fig-x)" is refused (it would
             print "Figure Figure 3.1").
  Chapters   every "chapter N" in prose is a link ([chapter 3](#ch-...)),
             or, for a chapter not yet written, [chapter 6]{.later}, shown
             as "chapter 6 (to come)".
  Glossary   a term is an entry of chapters/A*-glossary.md written
             [folio]{#gl-folio .term match="folio,folios"}; its first use in
             the prose of the book must be a link [folio](#gl-folio), and
             every link to #gl-... must have an entry.
  Sections   a numbered chapter has the sections of TEMPLATE.md (chapter 0,
             which has no patch, the last four of them).  In a part whose
             title is unnumbered (front matter, the epilogue, an appendix)
             every section is unnumbered too.
  Raw HTML   none in prose (an HTML comment is fine): `<num_pages>` in
             markdown is an HTML tag to pandoc, so write it in `code`.
  Ids        a section's automatic identifier is prefixed with its
             chapter's, so that no two sections share one.
  Navigation each chapter ends with links to the previous and next one.

Every problem is collected and reported with the chapter file; then the
build fails.  Diagrams are read from metadata cm-diagrams (a directory),
default build/book/diagrams.
]]

local errors = {}
local function err(where, msg)
  errors[#errors + 1] = (where or "(book.md)") .. ": " .. msg
end

local stringify = pandoc.utils.stringify

local REQUIRED = {
  "The problem", "The 2007 patch", "The patch, hunk by hunk",
  "What changed since 2007", "How 6.1's memcg does it", "The lab",
  "Exercises", "Further reading",
}
local REQUIRED_CH0 = { "How 6.1's memcg does it", "The lab", "Exercises", "Further reading" }

local function read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function norm_heading(s)
  return (s:gsub("\u{2018}", "'"):gsub("\u{2019}", "'"))
end

------------------------------------------------------------------------
-- a walker that knows whether it is inside a link (and to where)

local INLINE_CONTAINERS = {
  Emph = true, Strong = true, Strikeout = true, Superscript = true,
  Subscript = true, SmallCaps = true, Underline = true, Quoted = true,
}

-- visit(fn, inlines, ctx): fn(el, ctx) for every Str and Code, in order.
local function walk_inlines(inl, fn, ctx)
  local i = 1
  while i <= #inl do
    local el = inl[i]
    local t = el.t
    if t == "Str" or t == "Code" then
      fn(el, ctx, inl, i)
    elseif t == "Link" then
      walk_inlines(el.content, fn, { link = el.target, span = ctx.span, where = ctx.where })
    elseif t == "Span" then
      local c = { link = ctx.link, span = ctx.span, where = ctx.where }
      for _, cl in ipairs(el.classes) do if cl == "later" then c.span = "later" end end
      walk_inlines(el.content, fn, c)
    elseif INLINE_CONTAINERS[t] or t == "Cite" then
      walk_inlines(el.content, fn, ctx)
    end
    i = i + 1
  end
end

-- opts.tables, opts.quotes, opts.headers: also walk those.
local function walk_blocks(blocks, fn, ctx, opts)
  for _, b in ipairs(blocks) do
    local t = b.t
    if t == "Para" or t == "Plain" then
      walk_inlines(b.content, fn, ctx)
    elseif t == "Header" then
      if opts.headers then walk_inlines(b.content, fn, ctx) end
    elseif t == "Div" then
      local c = ctx
      if b.attributes["cm-source"] then
        c = { where = b.attributes["cm-source"] }
      end
      local skip = false
      for _, cl in ipairs(b.classes) do
        if cl == "listing" or cl == "chapter-nav" or cl == "glossary" then skip = true end
      end
      if not skip then walk_blocks(b.content, fn, c, opts) end
    elseif t == "BlockQuote" then
      if opts.quotes then walk_blocks(b.content, fn, ctx, opts) end
    elseif t == "BulletList" or t == "OrderedList" then
      for _, item in ipairs(b.content) do walk_blocks(item, fn, ctx, opts) end
    elseif t == "DefinitionList" then
      for _, item in ipairs(b.content) do
        walk_inlines(item[1], fn, ctx)
        for _, def in ipairs(item[2]) do walk_blocks(def, fn, ctx, opts) end
      end
    elseif t == "Table" and opts.tables then
      local st = pandoc.utils.to_simple_table(b)
      for _, cell in ipairs(st.headers) do walk_blocks(cell, fn, ctx, opts) end
      for _, row in ipairs(st.rows) do
        for _, cell in ipairs(row) do walk_blocks(cell, fn, ctx, opts) end
      end
    end
  end
end

------------------------------------------------------------------------
-- the document's parts: front matter, chapters, appendices

local function part_of(path)
  local base = path:match("([^/]+)%.md$") or path
  local nn = base:match("^(%d%d)%-")
  if nn then return "chapter", tonumber(nn) end
  local letter = base:match("^(%u)%d*%-")
  if letter then return "appendix", letter end
  return "front", nil
end

local function first_header(blocks)
  for _, b in ipairs(blocks) do
    if b.t == "Header" and b.level == 1 then return b end
  end
  return nil
end

------------------------------------------------------------------------

local function svg_for(dir, name)
  local s = read_file(dir .. "/" .. name .. ".svg")
  if not s then return nil end
  return s
end

function Pandoc(doc)
  local diagrams = "build/book/diagrams"
  if doc.meta["cm-diagrams"] then diagrams = stringify(doc.meta["cm-diagrams"]) end
  local html = FORMAT:match("html") or FORMAT:match("epub")

  -- 1. the parts, in order
  local parts = {}
  for _, b in ipairs(doc.blocks) do
    if b.t == "Div" and b.attributes["cm-source"] then
      local src = b.attributes["cm-source"]
      local kind, num = part_of(src)
      local h = first_header(b.content)
      local p = { div = b, src = src, kind = kind, num = num, header = h }
      if not h then
        err(src, "no level-1 heading")
      else
        p.id = h.identifier
        p.title = h.content
        if kind == "chapter" and not p.id:match("^ch%-") then
          err(src, "a chapter's identifier must start with ch- (# Title {#ch-slug}), not '" .. p.id .. "'")
        elseif kind == "appendix" and not p.id:match("^app%-") then
          err(src, "an appendix's identifier must start with app- (# Title {#app-slug}), not '" .. p.id .. "'")
        end
      end
      parts[#parts + 1] = p
    end
  end

  -- 2. unique section ids, required sections, raw HTML, numbering
  local ids, labels = {}, {}
  local function add_id(id, where)
    if id and id ~= "" then
      if ids[id] and ids[id] ~= where then
        err(where, "identifier #" .. id .. " is also used in " .. ids[id])
      end
      ids[id] = where
    end
  end

  local function label_for(p)
    if p.kind == "chapter" then return tostring(p.num) end
    if p.kind == "appendix" then return p.num end
    return nil
  end

  -- raw HTML anywhere in the source (book.md included)
  for _, top in ipairs(doc.blocks) do
    local where = top.t == "Div" and top.attributes["cm-source"] or nil
    pandoc.walk_block(pandoc.Div({ top }), {
      RawInline = function(r)
        if r.format:match("html") then
          err(where, "raw HTML in prose: " .. r.text .. " (write it in `code`, or escape the '<')")
        end
      end,
      RawBlock = function(r)
        if r.format:match("html") and not r.text:match("^%s*<!%-%-.*%-%->%s*$") then
          err(where, "raw HTML block: " .. r.text:sub(1, 60))
        end
      end,
    })
  end

  for _, p in ipairs(parts) do
    local where = p.src
    local chap = p.id or "x"
    local lab = label_for(p)
    local nfig, nlst = 0, 0
    local seen_local = {}
    local h2 = {}
    -- a part whose title is unnumbered (front and back matter, an
    -- appendix) has no numbered section: pandoc would go on counting
    -- the chapter before it (9.9, 9.10 ...)
    local unnumbered = p.header and p.header.classes:includes("unnumbered")
    p.div.content = pandoc.walk_block(pandoc.Div(p.div.content), {
      Header = function(h)
        if unnumbered and not h.classes:includes("unnumbered") then
          h.classes:insert("unnumbered")
        end
        if h.level >= 2 then
          local id = h.identifier
          local kept = false
          for _, pre in ipairs({ "ch-", "app-", "sec-", "gl-", "fig-", "lst-" }) do
            if id:sub(1, #pre) == pre then kept = true end
          end
          if not kept then
            local base = id:gsub("%-%d+$", "")
            local new = chap .. "--" .. base
            local k = 1
            while seen_local[new] do k = k + 1; new = chap .. "--" .. base .. "-" .. k end
            seen_local[new] = true
            h.identifier = new
          end
          if h.level == 2 then h2[#h2 + 1] = norm_heading(stringify(h.content)) end
        end
        add_id(h.identifier, where)
        return h
      end,
    }).content

    -- required sections
    if p.kind == "chapter" then
      local want = (p.num == 0) and REQUIRED_CH0 or REQUIRED
      local at = 0
      for _, w in ipairs(want) do
        local found
        for i, h in ipairs(h2) do if h == w then found = i end end
        if not found then
          err(where, "missing the required section '## " .. w .. "' (see chapters/TEMPLATE.md)")
        elseif found < at then
          err(where, "section '## " .. w .. "' is out of the order of chapters/TEMPLATE.md")
        else
          at = found
        end
      end
    end

    -- figures and listings
    p.div.content = pandoc.walk_block(pandoc.Div(p.div.content), {
      Para = function(para)
        if #para.content ~= 1 or para.content[1].t ~= "Image" then return nil end
        local img = para.content[1]
        local name = img.src:match("^diagrams/([%w_%-]+)%.svg$")
        if not name then
          err(where, "a figure must be a diagram, diagrams/NAME.svg: " .. img.src)
          return nil
        end
        if not read_file("diagrams/" .. name .. ".dot") and
           not read_file("diagrams/" .. name .. ".gp") then
          err(where, "figure " .. img.src .. ": no diagrams/" .. name .. ".dot (or .gp)")
          return nil
        end
        nfig = nfig + 1
        local id = img.identifier ~= "" and img.identifier or ("fig-" .. name)
        local num = lab and (lab .. "." .. nfig) or tostring(nfig)
        labels[id] = "Figure " .. num
        add_id(id, where)
        local caption = pandoc.List({ pandoc.Strong({ pandoc.Str("Figure " .. num .. ":") }), pandoc.Space() })
        caption:extend(img.caption)
        if #img.caption == 0 then err(where, "figure " .. img.src .. " has no caption") end
        if html then
          local svg = svg_for(diagrams, name)
          if not svg then
            err(where, "figure " .. img.src .. ": " .. diagrams .. "/" .. name .. ".svg was not rendered")
            return nil
          end
          return pandoc.Div({
            pandoc.RawBlock("html", svg),
            pandoc.Div({ pandoc.Plain(caption) }, pandoc.Attr("", { "caption" })),
          }, pandoc.Attr(id, { "figure" }, { { "role", "figure" } }))
        end
        img.caption = caption
        img.identifier = id
        return pandoc.Para({ img })
      end,
      Div = function(d)
        if not d.classes:includes("listing") then return nil end
        nlst = nlst + 1
        local num = lab and (lab .. "." .. nlst) or tostring(nlst)
        local id = d.identifier
        for _, b in ipairs(d.content) do
          if b.t == "CodeBlock" and b.identifier ~= "" then
            id = b.identifier
            b.identifier = ""
          end
        end
        if id ~= "" then
          d.identifier = id
          labels[id] = "Listing " .. num
          add_id(id, where)
        end
        local cap = d.content[1]
        if cap and cap.t == "Para" then
          local c = pandoc.List({ pandoc.Strong({ pandoc.Str("Listing " .. num .. ":") }), pandoc.Space() })
          c:extend(cap.content)
          d.content[1] = pandoc.Para(c)
        end
        return d
      end,
    }).content
    if p.id then
      add_id(p.id, where)
      if p.kind == "chapter" then
        labels[p.id] = "chapter " .. p.num
      elseif p.kind == "appendix" then
        labels[p.id] = "appendix " .. p.num
      end
    end
  end

  -- every other identifier: spans (glossary), divs, code blocks
  local gloss = {}
  for _, p in ipairs(parts) do
    pandoc.walk_block(p.div, {
      Span = function(s)
        add_id(s.identifier, p.src)
        if s.classes:includes("term") then
          if not s.identifier:match("^gl%-") then
            err(p.src, "a glossary term's identifier must start with gl-: " .. stringify(s))
          end
          local m = s.attributes["match"] or stringify(s):lower()
          local toks = {}
          for tok in m:gmatch("[^,]+") do toks[#toks + 1] = tok:lower() end
          gloss[#gloss + 1] = { id = s.identifier, term = stringify(s), toks = toks, src = p.src }
        end
      end,
      Div = function(d)
        if not d.attributes["cm-source"] then add_id(d.identifier, p.src) end
      end,
    })
  end

  -- 3. links: resolve, fill in empty ones.  First: an empty link prints
  -- its label ("Figure 7.1"), so the word must not be written before it
  -- too ("Figure [](#fig-x)" would print "Figure Figure 7.1").
  for _, p in ipairs(parts) do
    pandoc.walk_block(pandoc.Div(p.div.content), {
      Inlines = function(inl)
        for i, el in ipairs(inl) do
          if el.t == "Link" and #el.content == 0 and el.target:sub(1, 1) == "#"
              and labels[el.target:sub(2)] then
            local j = i - 1
            while j > 0 and (inl[j].t == "Space" or inl[j].t == "SoftBreak") do j = j - 1 end
            local word = labels[el.target:sub(2)]:match("^(%a+)"):lower()
            local prev = (j > 0 and inl[j].t == "Str") and inl[j].text:lower():gsub("s$", "") or nil
            if prev == word then
              err(p.src, "'" .. inl[j].text .. " [](" .. el.target .. ")' prints '" .. inl[j].text ..
                " " .. labels[el.target:sub(2)] .. "': write [](" .. el.target .. ") alone, it prints the word")
            end
          end
        end
      end,
    })
  end

  local referenced = {}
  for _, p in ipairs(parts) do
    p.div.content = pandoc.walk_block(pandoc.Div(p.div.content), {
      Link = function(l)
        local t = l.target
        if t:sub(1, 1) == "#" then
          local id = t:sub(2)
          referenced[id] = true
          if not ids[id] then
            local what = id:match("^gl%-") and "glossary term without an entry" or "unresolved cross-reference"
            err(p.src, what .. ": [" .. stringify(l.content) .. "](" .. t .. ")")
          elseif #l.content == 0 then
            if labels[id] then
              l.content = { pandoc.Str(labels[id]) }
            else
              err(p.src, "[](" .. t .. ") has no text and is not a figure, listing, chapter or appendix")
            end
          end
        elseif t:match("^%a+:") and not t:match("^https?:") and not t:match("^mailto:") then
          err(p.src, "link to an unsupported scheme: " .. t)
        elseif not t:match("^https?:") then
          err(p.src, "link to a file (" .. t .. "): the book is one document, link to an #id")
        end
        return l
      end,
      Span = function(s)
        if s.classes:includes("later") then
          local c = pandoc.List(s.content)
          c:insert(pandoc.Space())
          c:insert(pandoc.Emph({ pandoc.Str("(to come)") }))
          s.content = c
          return s
        end
      end,
    }).content
  end

  -- every figure is referred to by its number
  for id, l in pairs(labels) do
    if l:match("^Figure") and not referenced[id] then
      err(ids[id], l .. " (#" .. id .. ") is never referred to: write [](#" .. id .. ") in the text")
    end
  end

  -- 4. "chapter N" must be a link or marked as not yet written
  for _, p in ipairs(parts) do
    walk_blocks(p.div.content, function(el, ctx, inl, i)
      if el.t ~= "Str" or ctx.link or ctx.span then return end
      if el.text:match("^[Cc]hapters?$") and inl[i + 1] and inl[i + 1].t == "Space"
          and inl[i + 2] and inl[i + 2].t == "Str" and inl[i + 2].text:match("^%d") then
        local ctxt = {}
        for j = math.max(1, i - 4), math.min(#inl, i + 4) do ctxt[#ctxt + 1] = stringify(inl[j]) end
        err(ctx.where or p.src, "'" .. el.text .. " " .. inl[i + 2].text ..
          "' is neither a link [chapter N](#ch-...) nor marked [chapter N]{.later}: \"" ..
          table.concat(ctxt) .. "\"")
      end
    end, { where = p.src }, { tables = true, quotes = false, headers = true })
  end

  -- 5. glossary: every term linked from its first use
  if #gloss > 0 then
    local first = {}
    for _, p in ipairs(parts) do
      local is_gloss = p.src:match("glossary")
      if not is_gloss then
        walk_blocks(p.div.content, function(el, ctx)
          local tok
          if el.t == "Code" then
            tok = el.text:lower()
          else
            tok = el.text:lower():gsub("^[%p]+", ""):gsub("[%.,;:!%?%)\"\u{2019}']+$", "")
          end
          for _, g in ipairs(gloss) do
            if not first[g.id] then
              for _, k in ipairs(g.toks) do
                if tok == k then
                  first[g.id] = true
                  if ctx.link ~= "#" .. g.id then
                    err(ctx.where or p.src, "first use of the glossary term '" .. g.term ..
                      "' ('" .. stringify(el) .. "') is not a link to #" .. g.id)
                  end
                end
              end
            end
          end
        end, { where = p.src }, { tables = false, quotes = false, headers = false })
      end
    end
  end

  -- 6. previous / next
  for i, p in ipairs(parts) do
    local links = {}
    local function nav(q, word)
      if not q or not q.id then return end
      local t = pandoc.List({ pandoc.Str(word .. ": ") })
      t:extend(q.title)
      links[#links + 1] = pandoc.Link(t, "#" .. q.id)
    end
    nav(parts[i - 1], "Previous")
    nav(parts[i + 1], "Next")
    if #links > 0 then
      local inl = pandoc.List({ links[1] })
      if links[2] then inl:insert(pandoc.Str(" \u{00b7} ")); inl:insert(links[2]) end
      local navdiv = pandoc.Div({ pandoc.Plain(inl) }, pandoc.Attr("", { "chapter-nav" }))
      -- A part's divider may sit at the end of a chapter's file (a
      -- level-1 heading after the chapter's own): the links end the
      -- chapter, so they go before it.
      local at
      for k = 2, #p.div.content do
        local b = p.div.content[k]
        if b.t == "Header" and b.level == 1 then at = k; break end
      end
      if at then p.div.content:insert(at, navdiv) else p.div.content:insert(navdiv) end
    end
  end

  -- unwrap the chapters (the EPUB writer splits at level-1 headings)
  local out = {}
  for _, b in ipairs(doc.blocks) do
    if b.t == "Div" and b.attributes["cm-source"] then
      for _, x in ipairs(b.content) do out[#out + 1] = x end
    else
      out[#out + 1] = b
    end
  end
  doc.blocks = out

  if #errors > 0 then
    error(string.format("book.lua: %d problem%s:\n  %s", #errors, #errors == 1 and "" or "s",
      table.concat(errors, "\n  ")), 0)
  end
  return doc
end
