// The source of the targets that own the precompiled headers (cmake/pch.cmake):
// they compile nothing else.
