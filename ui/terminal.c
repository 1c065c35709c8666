/* ui/terminal.c - whether TERM can draw the top view, asked of terminfo
 * before anything is attached (term.h's capability macros, such as
 * columns and lines, would clash with the names of draw.c). */
#include "config.h"

#include <curses.h>
#include <errno.h>
#include <term.h>
#include <unistd.h>

#include "ui/ui.h"

int
ui_terminal_check(void)
{
	int err = 0;
	if (setupterm(NULL, STDOUT_FILENO, &err) != OK)
		return -EINVAL;
	/* cursor_address (cup): without it curses draws nothing useful. */
	const char *cup = tigetstr("cup");
	int r = cup && cup != (char *)-1 ? 0 : -EOPNOTSUPP;
	del_curterm(cur_term);
	return r;
}
