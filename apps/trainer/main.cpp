#include <iostream>
int main() { std::cout << "trainer\n"; return 0; }
