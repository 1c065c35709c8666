bin_PROGRAMS += stackspy
stackspy_SOURCES = \
	sampler/sampler.h \
	sampler/main.c \
	sampler/options.c \
	sampler/error.c \
	sampler/signals.c \
	sampler/cmd-dump.c \
	sampler/cmd-record.c \
	sampler/cmd-top.c \
	sampler/profiler.c \
	sampler/output.c
stackspy_LDADD = ui/libui.a collapse/libcollapse.a $(UNWIND_LIBS) $(NCURSES_LIBS) -lm
