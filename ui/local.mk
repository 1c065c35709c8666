# ui/: the `stackspy top` view.  The model (and the text fitting) needs no
# terminal and is always built, so tests/unit-uimodel runs everywhere; the
# curses screen only when configure found ncursesw (ui/ui.h has the stubs).
noinst_LIBRARIES += ui/libui.a
ui_libui_a_SOURCES = ui/ui.h ui/ui-internal.h ui/screen.h ui/model.c ui/text.c
if HAVE_NCURSES
ui_libui_a_SOURCES += ui/draw.c ui/input.c ui/terminal.c
endif
ui_libui_a_CFLAGS = $(AM_CFLAGS) $(NCURSES_CFLAGS)

# Unit tests of the model: aggregation, recursion, threads, the rolling
# window, callers/callees, sorting, text fitting.
check_PROGRAMS += tests/unit-uimodel
tests_unit_uimodel_SOURCES = tests/unit-uimodel.c
tests_unit_uimodel_LDADD = ui/libui.a collapse/libcollapse.a base/libbase.a

# `stackspy top` driven in tmux.
EXTRA_DIST += tests/top-lib.sh bench/top-rate.sh
