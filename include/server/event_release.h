/*
 * event_release.h — freeing a libevent event that may never have been
 * created (server layer; header-only). The server's loops (connections,
 * I/O threads, the metrics listener) tear down half-built objects on
 * their error paths, so each of their events may still be NULL.
 *
 * Thread-safety: as event_free (the event's loop must not run it now).
 */
#ifndef LUMEN_EVENT_RELEASE_H
#define LUMEN_EVENT_RELEASE_H

#include <stddef.h>

#include <event2/event.h>

/* Frees *event when there is one and leaves NULL behind. */
static inline void event_release(struct event **event)
{
	if (*event != NULL)
		event_free(*event);
	*event = NULL;
}

#endif
