/*
 * cxx.cc: a C++ target (namespaces, a class template, a function template,
 * a static member function), for the demangling tests.
 *
 *   t-main  read <- main_f1 <- main
 *   t-cxx   read <- ns::inner::helper<ns::Tag> <- ns::Widget<int>::spin
 *           <- ns::Outer::run <- cxx_thread
 */
#include "target.h"

namespace ns {

struct Tag {};

namespace inner {
template <typename T>
NOINLINE int
helper(int fd)
{
	char c;
	int r = (int) read(fd, &c, 1);
	BARRIER();
	return r;
}
} // namespace inner

template <typename T>
class Widget {
public:
	NOINLINE int
	spin(int fd)
	{
		int r = inner::helper<Tag>(fd);
		BARRIER();
		return r + value_;
	}
	T value_ = 1;
};

class Outer {
public:
	static NOINLINE int
	run(int fd)
	{
		Widget<int> w;
		int r = w.spin(fd);
		BARRIER();
		return r + 1;
	}
};

} // namespace ns

static volatile pid_t cxx_tid;
static int never[2];

TARGET_EXTERN_C void *cxx_thread(void *arg);
TARGET_EXTERN_C int main_f1(char *buf, size_t size);

NOINLINE void *
cxx_thread(void *arg)
{
	target_register("t-cxx", &cxx_tid);
	ns::Outer::run(never[0]);
	BARRIER();
	return arg;
}

NOINLINE int
main_f1(char *buf, size_t size)
{
	int r = (int) read(0, buf, size - 1);
	BARRIER();
	return r;
}

int
main()
{
	pthread_t thread;
	char buf[256];

	target_init();
	pthread_setname_np(pthread_self(), "t-main");
	if (pipe(never) != 0)
		target_die("pipe");
	errno = pthread_create(&thread, NULL, cxx_thread, NULL);
	if (errno)
		target_die("pthread_create");
	target_wait_blocked("t-cxx", target_wait_tid(&cxx_tid), SYS_read);

	printf("thread t-main %d\nthread t-cxx %d\nready\n", (int) getpid(),
	       (int) cxx_tid);
	while (target_command(buf, sizeof buf, main_f1(buf, sizeof buf)))
		;
	return 0;
}
