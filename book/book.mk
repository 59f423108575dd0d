# book.mk - build the book: HTML, EPUB and (when a PDF engine is installed) PDF.
#
# Included by the top-level Makefile; also works on its own from the
# repository root:   make -f book/book.mk book | book-check
#
#   book           build/book/index.html   one self-contained page: TOC, numbered
#                                          sections, highlighting, CSS and SVG inside
#                  build/book/containing-memory.epub
#                  build/book/containing-memory.pdf   printed from the HTML by weasyprint
#   book-html      only the HTML
#   book-epub      only the EPUB
#   book-pdf       only the PDF
#   book-instructor  build/book/instructor/index.html: the instructor edition,
#                  the same chapters with the exercises' worked answers and,
#                  after the front matter, book/instructor.md (a semester
#                  plan); book/edition.lua drops the answers from the others
#   book-deps      install the Debian packages the book needs (book/deps.sh)
#   book-diagrams  only diagrams/*.dot -> build/book/diagrams/*.svg
#   book-check     TAP lines: every diagram renders and fits the text width, the
#                  filters' tests pass, the book builds from scratch (HTML, EPUB,
#                  PDF) with no warning, epubcheck finds no error, the HTML has
#                  no doubled label, misnumbered section or two-function listing,
#                  the exercises' code is in the instructor edition only, and a
#                  broken figure, reference, glossary link, section or raw HTML
#                  fails
#   book-clean     remove build/book
#
# The spine: book.md, then front matter chapters/front-*.md, then the
# chapters chapters/NN-slug.md, then back matter chapters/end-*.md (an
# epilogue: unnumbered, like the front matter), then the appendices
# chapters/X-slug.md (X a capital letter), each in file-name order: adding
# a chapter is adding its file.  Any pandoc warning, broken include, broken reference (see
# book/book.lua) or diagram that fails to render fails the build.

# Including this file must not change the includer's default goal.
BOOK_SAVED_GOAL := $(.DEFAULT_GOAL)

BUILD       ?= build
PANDOC      ?= pandoc
PYTHON      ?= python3
WEASYPRINT  ?= weasyprint

BOOK_OUT      := $(BUILD)/book
BOOK_SRC      := $(BOOK_OUT)/.src/book.md
BOOK_HTML     := $(BOOK_OUT)/index.html
BOOK_EPUB     := $(BOOK_OUT)/containing-memory.epub
BOOK_PDF      := $(BOOK_OUT)/containing-memory.pdf
BOOK_FRONT    := $(sort $(wildcard chapters/front-*.md))
BOOK_CHAPTERS := $(sort $(wildcard chapters/[0-9][0-9]-*.md))
BOOK_END      := $(sort $(wildcard chapters/end-*.md))
BOOK_BACK     := $(sort $(wildcard chapters/[A-Z]-*.md))
BOOK_PARTS    := $(BOOK_FRONT) $(BOOK_CHAPTERS) $(BOOK_END) $(BOOK_BACK)
BOOK_ISRC     := $(BOOK_OUT)/.src/instructor.md
BOOK_IHTML    := $(BOOK_OUT)/instructor/index.html
BOOK_DOTS     := $(sort $(wildcard diagrams/*.dot))
BOOK_PLOTS    := $(sort $(wildcard diagrams/*.gp))
BOOK_SVGS     := $(patsubst diagrams/%.dot,$(BOOK_OUT)/diagrams/%.svg,$(BOOK_DOTS)) \
                 $(patsubst diagrams/%.gp,$(BOOK_OUT)/diagrams/%.svg,$(BOOK_PLOTS))
BOOK_TOOLS    := book/book.mk book/edition.lua book/include.lua book/book.lua book/book.css book/pandoc.yaml \
                 book/diagram.sh book/diagram-style.gvpr
# Everything a listing can come from: a change there rebuilds the book.
BOOK_LISTED   := $(shell find code labs patches -type f -not -name '*.o' 2>/dev/null)


BOOK_PANDOC = $(PANDOC) --defaults=book/pandoc.yaml --fail-if-warnings \
              --resource-path=$(BOOK_OUT):. --css=book/book.css \
              -M cm-diagrams=$(BOOK_OUT)/diagrams

.PHONY: book book-html book-epub book-pdf book-diagrams book-check book-clean book-deps \
	book-instructor

book: book-deps
	@$(MAKE) --no-print-directory -f book/book.mk BUILD=$(BUILD) book-html book-epub book-pdf
	@echo "book: $(BOOK_HTML)"
	@echo "book: $(BOOK_EPUB)"
	@echo "book: $(BOOK_PDF)"

book-deps:
	@sh book/deps.sh

book-html: $(BOOK_HTML)
book-epub: $(BOOK_EPUB)
book-pdf: $(BOOK_PDF)
book-diagrams: $(BOOK_SVGS)

# The spine: book.md, then each chapter wrapped in a Div naming its file, so
# that include.lua can say which chapter a broken reference is in.
$(BOOK_SRC): book.md $(BOOK_PARTS) book/book.mk
	@mkdir -p $(@D)
	@{ cat book.md; \
	  for f in $(BOOK_PARTS); do \
	    printf '\n\n::::::::::::::::::::: {cm-source="%s"}\n\n' "$$f"; \
	    cat "$$f"; \
	    printf '\n\n:::::::::::::::::::::\n'; \
	  done; } > $@.tmp && mv $@.tmp $@

# The instructor edition's spine: the same, with the semester plan after
# the front matter.
$(BOOK_ISRC): book.md book/instructor.md $(BOOK_PARTS) book/book.mk
	@mkdir -p $(@D)
	@{ cat book.md; \
	  for f in $(BOOK_FRONT) book/instructor.md $(BOOK_CHAPTERS) $(BOOK_END) $(BOOK_BACK); do \
	    printf '\n\n::::::::::::::::::::: {cm-source="%s"}\n\n' "$$f"; \
	    cat "$$f"; \
	    printf '\n\n:::::::::::::::::::::\n'; \
	  done; } > $@.tmp && mv $@.tmp $@

book-instructor: book-deps
	@$(MAKE) --no-print-directory -f book/book.mk BUILD=$(BUILD) $(BOOK_IHTML)
	@echo "book: $(BOOK_IHTML) (instructor edition: answers and a semester plan)"

$(BOOK_IHTML): $(BOOK_ISRC) $(BOOK_SVGS) $(BOOK_TOOLS) $(BOOK_LISTED)
	@mkdir -p $(@D)
	$(BOOK_PANDOC) -M cm-edition=instructor -M title-meta="Containing Memory (instructor edition)" \
		--to=html5 --self-contained -o $@.tmp.html $(BOOK_ISRC)
	@mv $@.tmp.html $@

$(BOOK_OUT)/diagrams/%.svg: diagrams/%.dot book/diagram.sh book/diagram-style.gvpr
	@mkdir -p $(@D)
	@sh book/diagram.sh $< $@

# A plot and the numbers it draws (diagrams/NAME.dat, from a lab run).
$(BOOK_OUT)/diagrams/%.svg: diagrams/%.gp diagrams/%.dat book/diagram.sh
	@mkdir -p $(@D)
	@sh book/diagram.sh $< $@

$(BOOK_HTML): $(BOOK_SRC) $(BOOK_SVGS) $(BOOK_TOOLS) $(BOOK_LISTED)
	@mkdir -p $(@D)
	$(BOOK_PANDOC) --to=html5 --self-contained -o $@.tmp.html $(BOOK_SRC)
	@mv $@.tmp.html $@

$(BOOK_EPUB): $(BOOK_SRC) $(BOOK_SVGS) $(BOOK_TOOLS) $(BOOK_LISTED)
	@mkdir -p $(@D)
	$(BOOK_PANDOC) --to=epub3 -o $@.tmp.epub $(BOOK_SRC)
	@mv $@.tmp.epub $@

# weasyprint prints the HTML with the stylesheet's @media print rules
# (about 20 s on two cores).
$(BOOK_PDF): $(BOOK_HTML)
	$(WEASYPRINT) -q $(BOOK_HTML) $@.tmp.pdf
	@mv $@.tmp.pdf $@

# Checks, as TAP lines.  The book is built from scratch in a scratch
# directory, so that a warning cannot hide behind an up-to-date target.
BOOK_CHECK_DIR ?= $(BUILD)/book-check

book-check: book-deps
	@rm -rf $(BOOK_CHECK_DIR) && mkdir -p $(BOOK_CHECK_DIR)
	@PANDOC="$(PANDOC)" $(PYTHON) book/check.py --build $(BOOK_CHECK_DIR) --make "$(MAKE) --no-print-directory -f book/book.mk"

book-clean:
	rm -rf $(BOOK_OUT) $(BOOK_CHECK_DIR)

# Give the default goal back to the including Makefile (unless this file is
# the one make was started with).
ifneq ($(BOOK_SAVED_GOAL),)
.DEFAULT_GOAL := $(BOOK_SAVED_GOAL)
else ifneq ($(notdir $(firstword $(MAKEFILE_LIST))),book.mk)
.DEFAULT_GOAL :=
endif
