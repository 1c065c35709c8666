# m4/stackspy_optional.m4 - an optional library found with pkg-config.
#
# STACKSPY_OPTIONAL_PKG(NAME, VAR, MODULES, HELP, DEBIAN-PACKAGE, DEFINE,
#                       DEFINE-TEXT, [CONDITIONAL])
#
# --with-NAME=yes|no|check (default check): with yes a missing library is
# an error that names the Debian package to install, with check it is
# left out.  Sets have_NAME (yes/no; NAME with '-' as '_'), VAR_CFLAGS
# and VAR_LIBS, defines DEFINE (if given) in config.h when found, and the automake
# conditional CONDITIONAL when one is named.
AC_DEFUN([STACKSPY_OPTIONAL_PKG], [
m4_pushdef([st_name], m4_translit([$1], [-], [_]))
AC_ARG_WITH([$1],
  [AS_HELP_STRING([--with-$1=yes|no|check], [$4 (default: check)])],
  [], [with_[]st_name=check])
have_[]st_name=no
AS_IF([test "x$with_[]st_name" != xno],
  [PKG_CHECK_MODULES([$2], [$3], [have_[]st_name=yes],
     [AS_IF([test "x$with_[]st_name" = xyes],
        [AC_MSG_ERROR([$3 not found: install $5])])])])
m4_ifval([$6], [AS_IF([test "x$have_[]st_name" = xyes],
  [AC_DEFINE([$6], [1], [$7])])])
m4_ifval([$8], [AM_CONDITIONAL([$8], [test "x$have_[]st_name" = xyes])])
m4_popdef([st_name])
])
