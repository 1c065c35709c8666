/* base/grow.c - the one growth rule of stackspy's arrays. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

static int grow(void *arrp, size_t *cap, size_t need, size_t size, size_t min, int zero)
{
	size_t ncap;
	void *old, *p;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : (min ? min : 1);
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	/* realloc would take the wrapped product and hand back too little. */
	if (size && ncap > SIZE_MAX / size)
		return -ENOMEM;
	/* Through memcpy: *arrp is a T *, not a void *, and writing it as one
	 * would break the aliasing rules. */
	memcpy(&old, arrp, sizeof(old));
	p = realloc(old, ncap * size);
	if (!p)
		return -ENOMEM;
	if (zero)
		memset((char *)p + *cap * size, 0, (ncap - *cap) * size);
	memcpy(arrp, &p, sizeof(p));
	*cap = ncap;
	return 0;
}

int base_grow(void *arrp, size_t *cap, size_t need, size_t size, size_t min)
{
	return grow(arrp, cap, need, size, min, 0);
}

int base_grow_zero(void *arrp, size_t *cap, size_t need, size_t size, size_t min)
{
	return grow(arrp, cap, need, size, min, 1);
}
